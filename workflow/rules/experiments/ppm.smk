# Experiment ppm: the private randomized power method family of Nicolas et al. (arXiv:2411.01931) on
# implicit-feedback data. Their Fig. 1 (relative error of the ideal low-pass filter against ε, every method)
# and Fig. 2 (first-step sensitivity ratio r(k, n)). Config section `ppm`; docs/ppm.md.

from ddppm.methods import available_methods as ppm_available_methods

# The section's cross-key checks (ddppm.experiments.ppm.check_config) ran with the config's validation.
PPM_EXPERIMENT = get_experiment("ppm")
PPM_USES = PPM_EXPERIMENT.methods_used(config)  # the registry entries its jobs use (rule code)
PPM = f"{RESULTS}/ppm"
PPM_METHODS = list(config["ppm"]["methods"])
PPM_FIG1 = [f"{PPM}/figures/fig1.{ext}" for ext in ("png", "pdf")]
PPM_FIG2 = [f"{PPM}/figures/fig2.{ext}" for ext in ("png", "pdf")]
PPM_TABLES = [f"{PPM}/tables/{name}.csv" for name in ("errors", "eps_ratio", "sensitivity_ratio")]
# The keys the runs read (the data reach them through the input files).
PPM_RUN_KEYS = tuple(
    f"ppm.{k}"
    for k in (
        "block_size",
        "rank",
        "iterations",
        "delta",
        "epsilons",
        "seeds",
        "seed",
        "sigma_calibration",
        "clients",
        "precision",
    )
)
PPM_SETTINGS = ("ppm.data",) + PPM_RUN_KEYS + ("ppm.methods", "ppm.bootstrap")


wildcard_constraints:
    ppm_method="|".join(ppm_available_methods(task="private_subspace")),


rule ppm_data:
    """ppm: the interaction matrix (synthetic or MovieLens), the top-k eigenvectors of the item–item matrix and
    the error of the noise-free power method."""
    output:
        interactions=f"{PPM}/data/interactions.parquet",
        reference=f"{PPM}/data/reference.parquet",
    log:
        f"{LOGS}/ppm/data.log",
    benchmark:
        f"{BENCH}/ppm/data.tsv"
    conda:
        "../../envs/ddppm.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        cfg=global_params("ppm.data", "ppm.rank", "ppm.block_size", "ppm.iterations", "ppm.seeds", "ppm.seed"),
        code=code_of("ppm_data.py", methods=PPM_USES),
    script:
        "../../scripts/ppm_data.py"


rule ppm_runs:
    """ppm: every (ε, run) of one method: relative filter error, σ, the ε it achieves, sensitivities."""
    input:
        interactions=rules.ppm_data.output.interactions,
        reference=rules.ppm_data.output.reference,
    output:
        f"{PPM}/runs/{{ppm_method}}.parquet",
    log:
        f"{LOGS}/ppm/runs/{{ppm_method}}.log",
    benchmark:
        f"{BENCH}/ppm/runs/{{ppm_method}}.tsv"
    conda:
        "../../envs/ddppm.yaml"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        cfg=global_params(*PPM_RUN_KEYS),
        code=code_of("ppm_runs.py", methods=PPM_USES),
    script:
        "../../scripts/ppm_runs.py"


rule ppm_summary:
    """ppm: mean error per (method, ε) with its bootstrap interval, the ε ratios at equal error, the findings."""
    input:
        runs=expand(f"{PPM}/runs/{{ppm_method}}.parquet", ppm_method=PPM_METHODS),
        reference=rules.ppm_data.output.reference,
    output:
        errors=f"{PPM}/tables/errors.parquet",
        errors_csv=f"{PPM}/tables/errors.csv",
        errors_page=report(
            html_twin(f"{PPM}/tables/errors.csv"),
            caption="../../report/ppm_errors.rst",
            category=PPM_EXPERIMENT.title,
            labels={"table": "errors"},
        ),
        eps_ratio=f"{PPM}/tables/eps_ratio.parquet",
        eps_ratio_csv=f"{PPM}/tables/eps_ratio.csv",
        eps_ratio_page=report(
            html_twin(f"{PPM}/tables/eps_ratio.csv"),
            caption="../../report/ppm_eps_ratio.rst",
            category=PPM_EXPERIMENT.title,
            labels={"table": "ε ratio at equal error"},
        ),
        findings=f"{PPM}/tables/findings.txt",
    log:
        f"{LOGS}/ppm/summary.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        cfg=global_params(*PPM_SETTINGS, "ppm.eps_ratio_reference", "ppm.claims"),
        code=code_of("ppm_summary.py", methods=PPM_USES),
    script:
        "../../scripts/ppm_summary.py"


rule ppm_figure_fig1:
    """ppm: their Fig. 1, relative error of the ideal low-pass filter against ε for every method."""
    input:
        errors=rules.ppm_summary.output.errors,
        reference=rules.ppm_data.output.reference,
    output:
        png=report(
            PPM_FIG1[0],
            caption="../../report/ppm_fig1.rst",
            category=PPM_EXPERIMENT.title,
            labels={"figure": "Fig. 1: error vs ε"},
        ),
        pdf=PPM_FIG1[1],
    log:
        f"{LOGS}/ppm/fig1.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        cfg=global_params(*PPM_SETTINGS),
        code=code_of("ppm_figure_fig1.py", methods=PPM_USES),
    script:
        "../../scripts/ppm_figure_fig1.py"


rule ppm_sensitivity_ratio:
    """ppm: their Fig. 2 data, the first-step ratio r(k, n) of the two sensitivity bounds."""
    output:
        table=f"{PPM}/tables/sensitivity_ratio.parquet",
        csv=f"{PPM}/tables/sensitivity_ratio.csv",
        page=report(
            html_twin(f"{PPM}/tables/sensitivity_ratio.csv"),
            caption="../../report/ppm_sensitivity_ratio.rst",
            category=PPM_EXPERIMENT.title,
            labels={"table": "sensitivity ratio r(k, n)"},
        ),
    log:
        f"{LOGS}/ppm/sensitivity_ratio.log",
    benchmark:
        f"{BENCH}/ppm/sensitivity_ratio.tsv"
    conda:
        "../../envs/ddppm.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        cfg=global_params("ppm.sensitivity_ratio"),
        code=code_of("ppm_sensitivity_ratio.py", methods=PPM_USES),
    script:
        "../../scripts/ppm_sensitivity_ratio.py"


rule ppm_figure_fig2:
    """ppm: their Fig. 2, r(k, n) empirical against their Approximation 6.2."""
    input:
        rules.ppm_sensitivity_ratio.output.table,
    output:
        png=report(
            PPM_FIG2[0],
            caption="../../report/ppm_fig2.rst",
            category=PPM_EXPERIMENT.title,
            labels={"figure": "Fig. 2: sensitivity ratio"},
        ),
        pdf=PPM_FIG2[1],
    log:
        f"{LOGS}/ppm/fig2.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        cfg=global_params("ppm.sensitivity_ratio"),
        code=code_of("ppm_figure_fig2.py", methods=PPM_USES),
    script:
        "../../scripts/ppm_figure_fig2.py"


rule ppm_fig1:
    """Their Fig. 1 (png and pdf) and the tables behind it."""
    input:
        PPM_FIG1,
        PPM_TABLES[:2],


rule ppm_fig2:
    """Their Fig. 2 (png and pdf) and the table behind it."""
    input:
        PPM_FIG2,
        PPM_TABLES[2],


localrules:
    ppm_summary,
    ppm_figure_fig1,
    ppm_figure_fig2,
    ppm_fig1,
    ppm_fig2,
