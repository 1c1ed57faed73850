# Experiment common: the common task (docs/common_task.md). Every method that solves it, on the pipeline's data
# sets (rows in the unit ball, split over the pipeline's agents), one adjacency and Definition 1's δ: runs per
# data set, one summary with costs, the "which method" table, one figure per data set. Config section `common`.

# The section's cross-key checks (ddppm.experiments.common.check_config) ran with the config's validation.
# Settings (ddppm.common_task.settings): `standard` (common.epsilons at common.delta) and the second settings of
# common.settings; each runs on its own data sets, and a setting's runs read only its own config keys.
from ddppm.experiments.common import dataset_job_params
from ddppm.experiments.common_peers import peer_datasets

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
    f"{COMMON}/figures/{name}/{ds}.png"
    for name, s in COMMON_SETTINGS.items()
    if name != "standard"
    for ds in s.datasets
]
COMMON_KEYS = tuple(f"common.{k}" for k in ("ranks", "iterations", "runs", "seed"))
COMMON_ALL_KEYS = tuple(
    dict.fromkeys(k for name in COMMON_SETTINGS for k in (*COMMON_KEYS, *setting_config_keys(name)))
)
COMMON_WILDCARDS = {"setting": "|".join(COMMON_SETTINGS), "dataset": "|".join(COMMON_DATASETS)}
# The peers as installed (common.peers): diffprivlib and OpenDP in their own environment (.venv-peers), which must
# exist before any job runs; their runs join the summary. The full grid is its own target, common_peers_full.
COMMON_PEERS = config["common"]["peers"]
COMMON_PEER_USES = peer_uses(COMMON_PEERS["libraries"])
COMMON_PEER_DATASETS = peer_datasets(config["common"]) if COMMON_PEER_USES else []
COMMON_PEER_RUNS = [f"{COMMON}/peers/{ds}.parquet" for ds in COMMON_PEER_DATASETS]
COMMON_PEER_KEYS = ("common.peers", "common.delta", "common.adjacency", "common.iterations", "common.seed")
COMMON_PEER_FULL_KEYS = (*COMMON_PEER_KEYS, "common.datasets", "common.ranks", "common.epsilons", "common.runs")
try:
    if COMMON_PEER_USES:
        check_peer_python(COMMON_PEERS)
except ConfigError as error:
    raise SystemExit(f"Config error (nothing ran): {error}") from None


rule common_runs:
    """Common task: every run of every method at every (k, ε) of one setting on one data set (the standard setting
    from the raw records: it also reads the data set's loader options and declared public bounds)."""
    input:
        unpack(problem_files),
        records=local_file,  # the standard setting reads the raw records
    output:
        f"{COMMON}/runs/{{setting}}/{{dataset}}.parquet",
    log:
        f"{LOGS}/common/runs/{{setting}}/{{dataset}}.log",
    benchmark:
        f"{BENCH}/common/runs/{{setting}}/{{dataset}}.tsv"
    wildcard_constraints:
        **COMMON_WILDCARDS,
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        cfg=lambda wc: dataset_job_params(config, wc.dataset, (*COMMON_KEYS, *setting_config_keys(wc.setting))),
        records=lambda wc: raw_records_params(config, wc.setting, wc.dataset),
        code=code_of("common_runs.py", methods=COMMON_RUN_USES),
    script:
        "../../scripts/common_runs.py"


rule common_summary:
    """Common task: the summary with costs, the "which method" table, the not-certified list, the findings and the
    README's table."""
    input:
        runs=lambda wc: COMMON_RUNS + DECLARED.collect("common_searched_runs") + COMMON_PEER_RUNS,
        bounds=lambda wc: DECLARED.collect("common_lower_bounds"),
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
        # each data set's own answer, kept when a later run names other data sets (your own data: where to look)
        dataset_findings=expand(f"{COMMON}/datasets/{{dataset}}/findings.txt", dataset=COMMON_DATASETS),
        dataset_answers=expand(f"{COMMON}/datasets/{{dataset}}/answer.md", dataset=COMMON_DATASETS),
        dataset_which=expand(f"{COMMON}/datasets/{{dataset}}/which_method.csv", dataset=COMMON_DATASETS),
        dataset_which_pages=[
            report(
                html_twin(f"{COMMON}/datasets/{ds}/which_method.csv"),
                caption="../../report/common_which_dataset.rst",
                category=COMMON_EXPERIMENT.title,
                labels={"table": "which method", "data set": ds},
            )
            for ds in COMMON_DATASETS
        ],
    log:
        f"{LOGS}/common/summary.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        cfg=global_params(*COMMON_ALL_KEYS, "common.settings", "common.searched", "common.claims", "threat_models"),
        code=code_of("common_summary.py", methods=COMMON_USES),
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
    log:
        f"{LOGS}/common/figure_{{dataset}}.log",
    wildcard_constraints:
        dataset=COMMON_WILDCARDS["dataset"],
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        cfg=global_params("common.delta", "common.adjacency"),
        code=code_of("common_figure.py", methods=COMMON_USES),
        setting="standard",
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
    log:
        f"{LOGS}/common/figure_{{setting}}_{{dataset}}.log",
    wildcard_constraints:
        **COMMON_WILDCARDS,
    params:
        cfg=global_params("common.delta", "common.adjacency"),
        code=code_of("common_figure.py", methods=COMMON_USES),
        setting=lambda wc: wc.setting,


rule common_clipping:
    """Common task: what the declared public bounds clip on each data set's raw records, and the error from clipping
    alone (docs/privacy.md, "What is public")."""
    input:
        dataset_files(config, COMMON_DATASETS),  # the user's files among them (dataset_options, source: file)
    output:
        csv=f"{COMMON}/clipping.csv",
        page=report(
            html_twin(f"{COMMON}/clipping.csv"),
            caption="../../report/common_clipping.rst",
            category=COMMON_EXPERIMENT.title,
            labels={"table": "clipping by the public bounds"},
        ),
    log:
        f"{LOGS}/common/clipping.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        cfg=global_params("common.datasets", "common.ranks"),
        # each data set's loader options and public bounds only (not its agents, network or Monte-Carlo layout)
        loaders=lambda wc: {ds: job_params(config, ds, ("dataset",)) for ds in COMMON_DATASETS},
        code=code_of("common_clipping.py", methods=[]),
    script:
        "../../scripts/common_clipping.py"


rule common_peers:
    """Common task: diffprivlib and OpenDP PCA through their own APIs, as installed (the peers' environment), on one
    data set: the default run's points (common.peers), each with its time budget; unfinished fits are counted."""
    input:
        unpack(problem_files),
    output:
        f"{COMMON}/peers/{{dataset}}.parquet",
    log:
        f"{LOGS}/common/peers/{{dataset}}.log",
    benchmark:
        f"{BENCH}/common/peers/{{dataset}}.tsv"
    wildcard_constraints:
        dataset="|".join(COMMON_PEER_DATASETS) or "none",
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=1500,
        runtime=lambda wc: peer_minutes(config, full=False),
    params:
        cfg=lambda wc: job_params(config, None, COMMON_PEER_KEYS),
        code=code_of("common_peers.py", methods=COMMON_PEER_USES),
        peers_lock=PEERS_LOCK,
        full=False,
    script:
        "../../scripts/common_peers.py"


use rule common_peers as common_peers_full_runs with:
    output:
        f"{COMMON}/peers_full/{{dataset}}.parquet",
    log:
        f"{LOGS}/common/peers_full/{{dataset}}.log",
    benchmark:
        f"{BENCH}/common/peers_full/{{dataset}}.tsv"
    wildcard_constraints:
        dataset=COMMON_WILDCARDS["dataset"],
    resources:
        mem_mb=1500,
        runtime=lambda wc: peer_minutes(config, full=True),
    params:
        cfg=lambda wc: job_params(config, None, COMMON_PEER_FULL_KEYS),
        code=code_of("common_peers.py", methods=COMMON_PEER_USES),
        peers_lock=PEERS_LOCK,
        full=True,


rule common_peers_full_summary:
    """The peers on every data set, k and ε of the common task (target common_peers_full), beside the correct law."""
    input:
        runs=expand(f"{COMMON}/peers_full/{{dataset}}.parquet", dataset=COMMON_DATASETS),
        summary=f"{COMMON}/summary.parquet",
    output:
        summary=f"{COMMON}/peers_full/summary.csv",
        summary_page=html_twin(f"{COMMON}/peers_full/summary.csv"),
    log:
        f"{LOGS}/common/peers_full_summary.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        code=code_of("common_peers_full_summary.py", methods=COMMON_PEER_USES),
    script:
        "../../scripts/common_peers_full_summary.py"


rule common_peers_full:
    """The peers as installed on every point of the common task (hours: a cluster job per data set)."""
    input:
        f"{COMMON}/peers_full/summary.csv",


rule common_task:
    """The common task: every figure and table."""
    input:
        COMMON_EXPERIMENT.targets(RESULTS),
        COMMON_FIGURES,
        f"{COMMON}/clipping.csv",


# Beyond what the experiment declares (its tables, findings and provenance): the figures its settings choose.
DECLARED.declare("experiments/common.smk", targets=COMMON_FIGURES + [f"{COMMON}/clipping.csv"])


localrules:
    common_summary,
    common_clipping,
    common_peers_full_summary,
    common_peers_full,
    common_figure,
    common_figure_setting,
    common_task,
