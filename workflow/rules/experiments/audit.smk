# Experiment audit (docs/audit.md): every auditable privacy claim attacked. Built by `snakemake audit`; never part of
# the default run. Each rule runs one step of ddppm.experiments.audit through the generic script.
from ddppm.experiments.audit import journal_datasets

AUDIT = f"{RESULTS}/audit"
AUDIT_EXPERIMENT = get_experiment("audit")
AUDIT_TITLE = AUDIT_EXPERIMENT.title
# The journal's calibrated method (config `verdict.method`) is attacked where the default run calibrated it (its
# parameter and δ-floor tables): on `audit.journal.datasets`, by default (null) every data set of the journal's figures.
AUDIT_JOURNAL_METHOD = config["verdict"]["method"]
AUDIT_JOURNAL = [ds for ds in journal_datasets(config) if ds in DATASETS and AUDIT_JOURNAL_METHOD in METHODS]
# The workshop method whose claims the workshop experiment checks, under each calibration of `audit.workshop` that
# the workshop experiment makes (none when the experiment is not run).
AUDIT_WORKSHOP_METHOD = config["workshop"]["claims"]["method"]
AUDIT_WORKSHOP = [
    tm
    for tm in config["audit"]["workshop"]["threat_models"]
    if "workshop" in config["experiments"]
    and tm in config["workshop"]["threat_models"]
    and AUDIT_WORKSHOP_METHOD in config["workshop"]["methods"]
]
AUDIT_WORKSHOP_DATA = {
    name: f"{RESULTS}/workshop/data/{name}.parquet" for name in ("normalized", "partition", "network")
}


rule audit_journal:
    """Privacy audit: the journal D-DP-PM at its calibrated points on one data set, the observer's whole memory."""
    input:
        unpack(problem_files),
        params=f"{RESULTS}/params/{{dataset}}/{AUDIT_JOURNAL_METHOD}.parquet",
        floor=f"{RESULTS}/methods/{AUDIT_JOURNAL_METHOD}/{{dataset}}/floor.parquet",
    output:
        parquet=f"{AUDIT}/journal/{{dataset}}.parquet",
    log:
        f"{LOGS}/audit/journal_{{dataset}}.log",
    benchmark:
        f"{BENCH}/audit/journal_{{dataset}}.tsv"
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        **step_params(
            "audit.journal",
            "audit.journal",
            "audit.seed",
            "verdict.method",
            "epsilons",
            methods=[AUDIT_JOURNAL_METHOD],
        ),
    script:
        "../../scripts/experiment_step.py"


rule audit_workshop:
    """Privacy audit: the workshop D-DP-PM at its points under one calibration, the observer's memory and the final
    release."""
    input:
        data=AUDIT_WORKSHOP_DATA["normalized"],
        partition=AUDIT_WORKSHOP_DATA["partition"],
        network=AUDIT_WORKSHOP_DATA["network"],
        params=f"{RESULTS}/workshop/calibration/{AUDIT_WORKSHOP_METHOD}~{{audit_tm}}.parquet",
    output:
        parquet=f"{AUDIT}/workshop/{{audit_tm}}.parquet",
    log:
        f"{LOGS}/audit/workshop_{{audit_tm}}.log",
    benchmark:
        f"{BENCH}/audit/workshop_{{audit_tm}}.tsv"
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        **step_params(
            "audit.workshop",
            "audit.workshop",
            "audit.seed",
            "workshop.claims.method",
            "workshop.epsilons",
            "workshop.threat_models",
            "workshop.budget",
            f"workshop.method_options.{AUDIT_WORKSHOP_METHOD}",
            methods=[AUDIT_WORKSHOP_METHOD],
        ),
    script:
        "../../scripts/experiment_step.py"


rule audit_method:
    """Privacy audit: one method or mutant (`<method>~<mutant>`) at every claimed ε, on its witness pair."""
    output:
        parquet=f"{AUDIT}/methods/{{entry}}.parquet",
    log:
        f"{LOGS}/audit/method_{{entry}}.log",
    benchmark:
        f"{BENCH}/audit/method_{{entry}}.tsv"
    wildcard_constraints:
        entry="|".join(AUDIT_EXPERIMENT.entries(config)),
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        **step_params(
            "audit.method",
            "audit",
            "common.iterations",
            methods=lambda wc: [AUDIT_EXPERIMENT.entry_method(wc.entry)],
        ),
    script:
        "../../scripts/experiment_step.py"


rule audit_run:
    """Privacy audit: every audited method and mutant with the D-DP-PM points' rows, and the findings."""
    input:
        methods=expand(f"{AUDIT}/methods/{{entry}}.parquet", entry=AUDIT_EXPERIMENT.entries(config)),
        journal=expand(f"{AUDIT}/journal/{{dataset}}.parquet", dataset=AUDIT_JOURNAL),
        workshop=expand(f"{AUDIT}/workshop/{{audit_tm}}.parquet", audit_tm=AUDIT_WORKSHOP),
    output:
        csv=f"{AUDIT}/summary.csv",
        page=report(
            html_twin(f"{AUDIT}/summary.csv"),
            caption="../../report/experiment.rst",
            category=AUDIT_TITLE,
            labels={"table": "summary"},
        ),
        parquet=f"{AUDIT}/summary.parquet",
        findings=f"{AUDIT}/findings.txt",
    log:
        f"{LOGS}/audit/run.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        **step_params(
            "audit.run",
            "audit",
            methods=AUDIT_EXPERIMENT.methods_used(config),
            caption="Per method, trust model and claimed ε: the lower bound on ε (95 %, Clopper–Pearson) from a "
            "likelihood-ratio test on the observer's whole view under a witness pair, its verdict (consistent: the "
            "attack did not refute the claim; violated: it did), the δ gap the draws could resolve and the largest "
            "bound they could give (bound_ceiling). The D-DP-PM variants at their calibrated points carry their data "
            "set, threat model (view, accounting, adjacency), observer and neighbour; infeasible: no parameters met "
            "the limit, nothing to attack.",
        ),
    script:
        "../../scripts/experiment_step.py"


rule audit_figure:
    """Privacy audit: claimed ε against the measured lower bound."""
    input:
        parquet=rules.audit_run.output.parquet,
    output:
        png=report(
            f"{AUDIT}/figure.png",
            caption="../../report/experiment.rst",
            category=AUDIT_TITLE,
            labels={"figure": "claimed against measured ε"},
        ),
        pdf=f"{AUDIT}/figure.pdf",
    log:
        f"{LOGS}/audit/figure.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        **step_params(
            "audit.figure",
            "audit",
            caption="The measured lower bound on ε against the claimed ε: above, the methods of the common task "
            "(a bar beyond the dotted claim is refuted; a mutant must be there); below, the D-DP-PM variants at "
            "their calibrated points (a marker above the dotted diagonal is refuted, none can pass the dashed "
            "ceiling of the draws). Below the claim: consistent, which is evidence, not proof.",
        ),
    script:
        "../../scripts/experiment_step.py"


rule audit:
    """The privacy audit: its table, findings and figure (not part of the default run)."""
    input:
        f"{AUDIT}/summary.csv",
        f"{AUDIT}/findings.txt",
        f"{AUDIT}/figure.png",


localrules:
    audit_figure,
    audit,
