# Experiment common: the common task (docs/common_task.md). Every method that solves it, on the pipeline's data
# sets (rows in the unit ball, split over the pipeline's agents), one adjacency and Definition 1's δ: runs per
# data set, one summary with costs, the "which method" table, one figure per data set. Config section `common`.

# The section's cross-key checks (ddppm.experiments.common.check_config) ran with the config's validation.
COMMON_EXPERIMENT = get_experiment("common")
COMMON = f"{RESULTS}/common"
COMMON_DATASETS = list(config["common"]["datasets"])
COMMON_FIGURES = [f"{COMMON}/figures/{ds}.png" for ds in COMMON_DATASETS]
COMMON_KEYS = tuple(f"common.{k}" for k in ("ranks", "epsilons", "delta", "adjacency", "iterations", "runs", "seed"))


rule common_runs:
    """Common task: every run of every method at every (k, ε) on one data set."""
    input:
        unpack(problem_files),
    output:
        f"{COMMON}/runs/{{dataset}}.parquet",
    params:
        cfg=global_params(*COMMON_KEYS),
        code=code_of("common_runs.py"),
    log:
        f"{LOGS}/common/runs/{{dataset}}.log",
    benchmark:
        f"{BENCH}/common/runs/{{dataset}}.tsv"
    resources:
        mem_mb=2000,
        runtime=20,
    conda:
        "../../envs/ddppm.yaml"
    script:
        "../../scripts/common_runs.py"


rule common_summary:
    """Common task: the summary with costs, the "which method" table, the not-certified list, the findings and the
    README's table."""
    input:
        runs=expand(f"{COMMON}/runs/{{dataset}}.parquet", dataset=COMMON_DATASETS),
        bounds=lambda wc: COMMON_LOWER_BOUNDS,
    output:
        summary=report(
            f"{COMMON}/summary.csv",
            caption="../../report/common_summary.rst",
            category=COMMON_EXPERIMENT.title,
            labels={"table": "every method, k and ε"},
        ),
        which=report(
            f"{COMMON}/which_method.csv",
            caption="../../report/common_which.rst",
            category=COMMON_EXPERIMENT.title,
            labels={"table": "which method"},
        ),
        not_certified=report(
            f"{COMMON}/not_certified.csv",
            caption="../../report/common_not_certified.rst",
            category=COMMON_EXPERIMENT.title,
            labels={"table": "not certified"},
        ),
        parquet=f"{COMMON}/summary.parquet",
        findings=f"{COMMON}/findings.txt",
        readme=f"{COMMON}/readme_summary.md",
    params:
        cfg=global_params(*COMMON_KEYS, "common.datasets"),
        code=code_of("common_summary.py"),
    log:
        f"{LOGS}/common/summary.log",
    conda:
        "../../envs/ddppm.yaml"
    script:
        "../../scripts/common_summary.py"


rule common_figure:
    """Common task: error against ε for every method, one panel per (k, trust model), for one data set."""
    input:
        f"{COMMON}/summary.parquet",
    output:
        png=report(
            f"{COMMON}/figures/{{dataset}}.png",
            caption="../../report/common_figure.rst",
            category=COMMON_EXPERIMENT.title,
            labels={"figure": "{dataset}"},
        ),
        pdf=f"{COMMON}/figures/{{dataset}}.pdf",
    params:
        cfg=global_params("common.delta", "common.adjacency"),
        code=code_of("common_figure.py"),
    log:
        f"{LOGS}/common/figure_{{dataset}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/ddppm.yaml"
    script:
        "../../scripts/common_figure.py"


rule common_task:
    """The common task: every figure and table."""
    input:
        COMMON_EXPERIMENT.targets(RESULTS),
        COMMON_FIGURES,


EXPERIMENT_TARGETS.extend(COMMON_EXPERIMENT.targets(RESULTS) + COMMON_FIGURES)
PROVENANCE_INPUTS.append(f"{COMMON}/summary.parquet")
FINDINGS_INPUTS.append(COMMON_EXPERIMENT.findings_path(RESULTS))


localrules:
    common_summary,
    common_figure,
    common_task,

REPORT_TABLES.extend([f"{COMMON}/summary.csv", f"{COMMON}/which_method.csv", f"{COMMON}/not_certified.csv"])
