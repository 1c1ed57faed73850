# Experiment workshop: Fig. 1 of the workshop D-DP-PM paper (Campbell, Scaglione & Peisert, TPDP 2025) on SBM
# graph signals: the workshop and journal D-DP-PM calibrated under each threat model, LDP (as the paper ran it
# and sound) and the oracle Gaussian release; the budget split, the claims with numbers. Config section
# `workshop`; docs/workshop.md.

# The section's cross-key checks (ddppm.experiments.workshop.check_config) ran with the config's validation.
WORKSHOP_EXPERIMENT = get_experiment("workshop")
WORKSHOP_USES = WORKSHOP_EXPERIMENT.methods_used(config)  # the registry entries its jobs use (rule code)
WORKSHOP = f"{RESULTS}/workshop"
WORKSHOP_CALIBRATED = [m for m in config["workshop"]["methods"] if get_method(m).calibrated]
WORKSHOP_FIG1 = [f"{WORKSHOP}/figures/fig1.{ext}" for ext in ("png", "pdf")]
WORKSHOP_TABLES = [f"{WORKSHOP}/tables/{name}.csv" for name in ("summary", "budget", "claims")]
# What the Monte-Carlo runs read (the data and the calibrations reach them as input files).
WORKSHOP_RUN_KEYS = tuple(
    f"workshop.{k}" for k in ("epsilons", "delta_levels", "methods", "threat_models", "method_options", "budget")
) + ("workshop.runs", "workshop.seed")
CATEGORY_WORKSHOP = WORKSHOP_EXPERIMENT.title


wildcard_constraints:
    workshop_method="|".join(calibrated_methods()),
    workshop_tm="|".join(config["workshop"]["threat_models"]),


rule workshop_data:
    """workshop: the SBM graph signals (400 × 3, rows in the unit ball), the row → agent table and the ring."""
    output:
        data=f"{WORKSHOP}/data/normalized.parquet",
        partition=f"{WORKSHOP}/data/partition.parquet",
        network=f"{WORKSHOP}/data/network.parquet",
    log:
        f"{LOGS}/workshop/data.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        cfg=global_params("workshop.data", "workshop.partition", "workshop.network"),
        code=code_of("workshop_data.py", methods=[]),
    script:
        "../../scripts/workshop_data.py"


rule workshop_calibrate:
    """workshop: one D-DP-PM variant calibrated under one threat model on every ε (least error meeting δ)."""
    input:
        data=rules.workshop_data.output.data,
        partition=rules.workshop_data.output.partition,
        network=rules.workshop_data.output.network,
    output:
        params=f"{WORKSHOP}/calibration/{{workshop_method}}~{{workshop_tm}}.parquet",
        candidates=f"{WORKSHOP}/calibration/{{workshop_method}}~{{workshop_tm}}~candidates.parquet",
    log:
        f"{LOGS}/workshop/calibrate/{{workshop_method}}~{{workshop_tm}}.log",
    benchmark:
        f"{BENCH}/workshop/calibrate/{{workshop_method}}~{{workshop_tm}}.tsv"
    conda:
        "../../envs/ddppm.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        cfg=lambda wc: job_params(
            config,
            None,
            (
                "workshop.epsilons",
                "workshop.delta_levels",
                f"workshop.method_options.{wc.workshop_method}",
                f"threat_models.{wc.workshop_tm}",
            )
            + tuple(f"workshop.{key}" for key in get_method(wc.workshop_method).experiment_options),
        ),
        code=code_of("workshop_calibrate.py", methods=lambda wc: [wc.workshop_method]),
    script:
        "../../scripts/workshop_calibrate.py"


rule workshop_runs:
    """workshop: every Monte-Carlo run of every method at every ε (parameters of the closed-form methods too)."""
    input:
        data=rules.workshop_data.output.data,
        partition=rules.workshop_data.output.partition,
        network=rules.workshop_data.output.network,
        calibrations=expand(
            f"{WORKSHOP}/calibration/{{m}}~{{tm}}.parquet",
            m=WORKSHOP_CALIBRATED,
            tm=config["workshop"]["threat_models"],
        ),
    output:
        runs=f"{WORKSHOP}/runs.parquet",
        params=f"{WORKSHOP}/params.parquet",
    log:
        f"{LOGS}/workshop/runs.log",
    benchmark:
        f"{BENCH}/workshop/runs.tsv"
    conda:
        "../../envs/ddppm.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        cfg=global_params(*WORKSHOP_RUN_KEYS),
        code=code_of("workshop_runs.py", methods=WORKSHOP_USES),
    script:
        "../../scripts/workshop_runs.py"


rule workshop_summary:
    """workshop: mean error per (method, threat model, ε), the budget split used, the claims and findings."""
    input:
        runs=rules.workshop_runs.output.runs,
        params=rules.workshop_runs.output.params,
    output:
        summary=f"{WORKSHOP}/tables/summary.parquet",
        summary_csv=WORKSHOP_TABLES[0],
        summary_page=report(
            html_twin(WORKSHOP_TABLES[0]),
            caption="../../report/workshop_summary.rst",
            category=CATEGORY_WORKSHOP,
            labels={"table": "mean errors"},
        ),
        budget=f"{WORKSHOP}/tables/budget.parquet",
        budget_csv=WORKSHOP_TABLES[1],
        budget_page=report(
            html_twin(WORKSHOP_TABLES[1]),
            caption="../../report/workshop_budget.rst",
            category=CATEGORY_WORKSHOP,
            labels={"table": "budget split"},
        ),
        claims=f"{WORKSHOP}/tables/claims.parquet",
        claims_csv=WORKSHOP_TABLES[2],
        claims_page=report(
            html_twin(WORKSHOP_TABLES[2]),
            caption="../../report/workshop_claims.rst",
            category=CATEGORY_WORKSHOP,
            labels={"table": "claims"},
        ),
        findings=f"{WORKSHOP}/tables/findings.txt",
    log:
        f"{LOGS}/workshop/summary.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        cfg=global_params(*WORKSHOP_RUN_KEYS, "workshop.claims"),
        code=code_of("workshop_summary.py", methods=WORKSHOP_USES),
    script:
        "../../scripts/workshop_summary.py"


rule workshop_figure_fig1:
    """workshop: their Fig. 1, error against ε per threat model for every method."""
    input:
        summary=rules.workshop_summary.output.summary,
    output:
        png=report(
            WORKSHOP_FIG1[0],
            caption="../../report/workshop_fig1.rst",
            category=CATEGORY_WORKSHOP,
            labels={"figure": "Fig. 1: error vs ε"},
        ),
        pdf=WORKSHOP_FIG1[1],
    log:
        f"{LOGS}/workshop/fig1.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        cfg=global_params("workshop.methods", "workshop.threat_models", "workshop.claims", "workshop.labels"),
        code=code_of("workshop_figure.py", methods=WORKSHOP_USES),
    script:
        "../../scripts/workshop_figure.py"


rule workshop_fig1:
    """The workshop paper's Fig. 1 (png and pdf) and the tables behind it (errors, budget split, claims)."""
    input:
        WORKSHOP_FIG1,
        WORKSHOP_TABLES,


localrules:
    workshop_data,
    workshop_summary,
    workshop_figure_fig1,
    workshop_fig1,
