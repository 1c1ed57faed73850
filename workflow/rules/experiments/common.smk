# Experiment common: the common task (docs/common_task.md). Every method that solves it, on the pipeline's data
# sets (rows in the unit ball, split over the pipeline's agents), one adjacency and Definition 1's δ: runs per
# data set, one summary with costs, the "which method" table, one figure per data set. Config section `common`.

# The section's cross-key checks (ddppm.experiments.common.check_config) ran with the config's validation.
# Settings (ddppm.common.settings): `standard` (common.epsilons at common.delta) and the second settings of
# common.settings; each runs on its own data sets, and a setting's runs read only its own config keys.
COMMON_EXPERIMENT = get_experiment("common")
# The registry entries its jobs use (rule code): the runs run the common-task methods; the summary and figures
# also show the searched variants and the floors of the calibrated methods.
COMMON_USES = COMMON_EXPERIMENT.methods_used(config)
COMMON_RUN_USES = list(common_task_methods())
COMMON = f"{RESULTS}/common"
COMMON_DATASETS = list(config["common"]["datasets"])
COMMON_SETTINGS = common_settings(config)
COMMON_RUNS = [f"{COMMON}/runs/{name}/{ds}.parquet" for name, s in COMMON_SETTINGS.items() for ds in s.datasets]
COMMON_FIGURES = [f"{COMMON}/figures/{ds}.png" for ds in COMMON_DATASETS] + [
    f"{COMMON}/figures/{name}/{ds}.png" for name, s in COMMON_SETTINGS.items() if name != "standard" for ds in s.datasets
]
COMMON_KEYS = tuple(f"common.{k}" for k in ("ranks", "iterations", "runs", "seed"))
COMMON_ALL_KEYS = tuple(dict.fromkeys(k for name in COMMON_SETTINGS for k in (*COMMON_KEYS, *setting_config_keys(name))))
COMMON_WILDCARDS = {"setting": "|".join(COMMON_SETTINGS), "dataset": "|".join(COMMON_DATASETS)}


rule common_runs:
    """Common task: every run of every method at every (k, ε) of one setting on one data set."""
    input:
        unpack(problem_files),
    output:
        f"{COMMON}/runs/{{setting}}/{{dataset}}.parquet",
    wildcard_constraints:
        **COMMON_WILDCARDS,
    params:
        cfg=lambda wc: job_params(config, None, (*COMMON_KEYS, *setting_config_keys(wc.setting))),
        code=code_of("common_runs.py", methods=COMMON_RUN_USES),
    log:
        f"{LOGS}/common/runs/{{setting}}/{{dataset}}.log",
    benchmark:
        f"{BENCH}/common/runs/{{setting}}/{{dataset}}.tsv"
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
        runs=lambda wc: COMMON_RUNS + COMMON_SEARCHED_RUNS,
        bounds=lambda wc: COMMON_LOWER_BOUNDS,
    output:
        summary=f"{COMMON}/summary.csv",
        summary_page=report(
            html_twin(f"{COMMON}/summary.csv"),
            caption="../../report/common_summary.rst",
            category=COMMON_EXPERIMENT.title,
            labels={"table": "every method, k and ε"},
        ),
        which=f"{COMMON}/which_method.csv",
        which_page=report(
            html_twin(f"{COMMON}/which_method.csv"),
            caption="../../report/common_which.rst",
            category=COMMON_EXPERIMENT.title,
            labels={"table": "which method"},
        ),
        not_certified=f"{COMMON}/not_certified.csv",
        not_certified_page=report(
            html_twin(f"{COMMON}/not_certified.csv"),
            caption="../../report/common_not_certified.rst",
            category=COMMON_EXPERIMENT.title,
            labels={"table": "not certified"},
        ),
        parquet=f"{COMMON}/summary.parquet",
        findings=f"{COMMON}/findings.txt",
        readme=f"{COMMON}/readme_summary.md",
    params:
        cfg=global_params(*COMMON_ALL_KEYS, "common.settings", "common.searched", "threat_models"),
        code=code_of("common_summary.py", methods=COMMON_USES),
    log:
        f"{LOGS}/common/summary.log",
    conda:
        "../../envs/ddppm.yaml"
    script:
        "../../scripts/common_summary.py"


rule common_figure:
    """Common task: error against ε for every method, one panel per (k, trust model), for one data set (standard
    setting)."""
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
    wildcard_constraints:
        dataset=COMMON_WILDCARDS["dataset"],
    params:
        cfg=global_params("common.delta", "common.adjacency"),
        code=code_of("common_figure.py", methods=COMMON_USES),
        setting="standard",
    log:
        f"{LOGS}/common/figure_{{dataset}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../../envs/ddppm.yaml"
    script:
        "../../scripts/common_figure.py"


use rule common_figure as common_figure_setting with:
    output:
        png=report(
            f"{COMMON}/figures/{{setting}}/{{dataset}}.png",
            caption="../../report/common_figure_setting.rst",
            category=COMMON_EXPERIMENT.title,
            subcategory="{setting}",
            labels={"figure": "{dataset}", "setting": "{setting}"},
        ),
        pdf=f"{COMMON}/figures/{{setting}}/{{dataset}}.pdf",
    wildcard_constraints:
        **COMMON_WILDCARDS,
    params:
        cfg=global_params("common.delta", "common.adjacency"),
        code=code_of("common_figure.py", methods=COMMON_USES),
        setting=lambda wc: wc.setting,
    log:
        f"{LOGS}/common/figure_{{setting}}_{{dataset}}.log",


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
    common_figure_setting,
    common_task,

