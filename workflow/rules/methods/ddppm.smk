# D-DP-PM (journal): calibration per threat model (sharded), its parameter table, and Fig. 3 (δ and error vs T).

DDPPM_THREAT_MODELS = lambda ds: dataset_config(config, ds)["methods"]["ddppm"]["threat_models"]
DDPPM_CALIBRATION_CHUNKS = lambda ds: int(dataset_config(config, ds)["methods"]["ddppm"]["calibration"]["chunks"])
# The registry entries its jobs use (rule code): the journal method; the searched variants on the common task.
DDPPM_USES = ["ddppm"]
DDPPM_SEARCHED_USES = ["ddppm", *config["common"]["searched"]["methods"]]
DDPPM_FLOORS = {ds: [f"{RESULTS}/methods/ddppm/{ds}/floor.parquet"] for ds in DATASETS}
# The common task lists D-DP-PM beside its table with the floor: a δ no parameter choice gets under; on the data
# sets only the common task runs, the network view's floor on the common task's ε grid.
DDPPM_COMMON_ONLY = (
    [ds for ds in config["common"]["datasets"] if ds not in DATASETS] if "common" in config["experiments"] else []
)
# Where the floor leaves room, the journal and workshop D-DP-PM calibrated to the common δ under a searched threat
# model (common.searched): their runs join the common task's summary, beside its table (privacy column searched).
DDPPM_COMMON_SEARCHED = searched_datasets(config) if "common" in config["experiments"] else []
DDPPM_CALIBRATION_KEYS = (
    "epsilons",
    "delta_limits",
    "methods.ddppm.privacy",
    "methods.ddppm.calibration",
    "threat_models.{threat_model}",
)

DDPPM_FIG3 = [f"{RESULTS}/figures/fig3_{tm}.{ext}" for tm in DDPPM_THREAT_MODELS(DATASETS[0]) for ext in ("png", "pdf")]

DDPPM_FRONTIER = [
    f"{RESULTS}/figures/frontier_{tm}.{ext}" for tm in DDPPM_THREAT_MODELS(DATASETS[0]) for ext in ("png", "pdf")
]


wildcard_constraints:
    threat_model="[A-Za-z0-9_]+",


rule ddppm_calibrate_prepare:
    """D-DP-PM: the calibration's neighbour search under one threat model, once for every job of a sharded
    calibration (calibration.chunks > 1; unsharded, rule ddppm_calibrate searches itself)."""
    input:
        **problem_files(),
    output:
        temp(f"{RESULTS}/methods/ddppm/{{dataset}}/{{threat_model}}/prepared.pickle"),
    log:
        f"{LOGS}/ddppm_calibrate_prepare/{{dataset}}/{{threat_model}}.log",
    benchmark:
        f"{BENCH}/ddppm_calibrate_prepare/{{dataset}}/{{threat_model}}.tsv"
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        cfg=params_of(*DDPPM_CALIBRATION_KEYS, drop=["methods.ddppm.calibration.chunks"]),
        code=code_of("ddppm_calibrate_prepare.py", methods=DDPPM_USES),
    script:
        "../../scripts/ddppm_calibrate_prepare.py"


rule ddppm_calibrate_chunk:
    """D-DP-PM: assess one slice of the coarse calibration grid under one threat model."""
    input:
        **problem_files(),
        prepared=f"{RESULTS}/methods/ddppm/{{dataset}}/{{threat_model}}/prepared.pickle",
    output:
        temp(f"{RESULTS}/methods/ddppm/{{dataset}}/{{threat_model}}/coarse~{{chunk}}-of-{{chunks}}.parquet"),
    log:
        f"{LOGS}/ddppm_calibrate_chunk/{{dataset}}/{{threat_model}}/coarse~{{chunk}}-of-{{chunks}}.log",
    benchmark:
        f"{BENCH}/ddppm_calibrate_chunk/{{dataset}}/{{threat_model}}/coarse~{{chunk}}-of-{{chunks}}.tsv"
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        cfg=params_of(*DDPPM_CALIBRATION_KEYS, drop=["methods.ddppm.calibration.chunks"]),
        code=code_of("ddppm_calibrate_prepare.py", "ddppm_calibrate_chunk.py", methods=DDPPM_USES),
    script:
        "../../scripts/ddppm_calibrate_chunk.py"


rule ddppm_calibrate:
    """D-DP-PM: the calibration under one threat model (docs/method.md §7): neighbour search, coarse grid, fine
    stage and confirmation in one job, or, when sharded, the last two on the shards' coarse grid."""
    input:
        unpack(
            lambda wc: calibration_inputs(
                wc, DDPPM_CALIBRATION_CHUNKS(wc.dataset), f"{RESULTS}/methods/ddppm/{wc.dataset}/{wc.threat_model}"
            )
        ),
    output:
        chosen=f"{RESULTS}/methods/ddppm/{{dataset}}/{{threat_model}}/calibration.parquet",
        candidates=f"{RESULTS}/methods/ddppm/{{dataset}}/{{threat_model}}/candidates.parquet",
    log:
        f"{LOGS}/ddppm_calibrate/{{dataset}}/{{threat_model}}.log",
    benchmark:
        f"{BENCH}/ddppm_calibrate/{{dataset}}/{{threat_model}}.tsv"
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        cfg=params_of(*DDPPM_CALIBRATION_KEYS, drop=["methods.ddppm.calibration.chunks"]),
        code=code_of("ddppm_calibrate_prepare.py", "ddppm_calibrate_chunk.py", "ddppm_calibrate.py", methods=DDPPM_USES),
    script:
        "../../scripts/ddppm_calibrate.py"


rule ddppm_params:
    """D-DP-PM: the parameter table (one row per ε and threat model) from the calibrations."""
    input:
        lambda wc: expand(
            f"{RESULTS}/methods/ddppm/{{dataset}}/{{threat_model}}/calibration.parquet",
            dataset=wc.dataset,
            threat_model=DDPPM_THREAT_MODELS(wc.dataset),
        ),
    output:
        f"{RESULTS}/params/{{dataset}}/ddppm.parquet",
    log:
        f"{LOGS}/ddppm_params/{{dataset}}.log",
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        cfg=params_of("methods.ddppm.threat_models", "threat_models"),
        code=code_of("ddppm_params.py", methods=DDPPM_USES),
    script:
        "../../scripts/ddppm_params.py"


rule ddppm_delta_curve:
    """D-DP-PM: δ and error against T at ε = methods.ddppm.delta_curve.eps, other parameters fixed (Fig. 3)."""
    input:
        **problem_files(),
        calibration=f"{RESULTS}/methods/ddppm/{{dataset}}/{{threat_model}}/calibration.parquet",
        candidates=f"{RESULTS}/methods/ddppm/{{dataset}}/{{threat_model}}/candidates.parquet",
        floor=f"{RESULTS}/methods/ddppm/{{dataset}}/floor.parquet",
    output:
        f"{RESULTS}/methods/ddppm/{{dataset}}/{{threat_model}}/delta_vs_T.parquet",
    log:
        f"{LOGS}/ddppm_delta_curve/{{dataset}}/{{threat_model}}.log",
    benchmark:
        f"{BENCH}/ddppm_delta_curve/{{dataset}}/{{threat_model}}.tsv"
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        cfg=params_of(
            "epsilons",
            "delta_limits",
            "methods.ddppm",
            "threat_models.{threat_model}",
            drop=["methods.ddppm.calibration.chunks", "methods.ddppm.threat_models"],
        ),
        code=code_of("ddppm_delta_curve.py", methods=DDPPM_USES),
    script:
        "../../scripts/ddppm_delta_curve.py"


rule figure_fig3:
    """Fig. 3 of the journal paper under one threat model: error and δ against T at fixed ε."""
    input:
        curves=lambda wc: expand(
            f"{RESULTS}/methods/ddppm/{{dataset}}/{{threat_model}}/delta_vs_T.parquet",
            dataset=DATASETS,
            threat_model=wc.threat_model,
        ),
    output:
        png=report(
            f"{RESULTS}/figures/fig3_{{threat_model}}.png",
            caption="../../report/fig3.rst",
            category="Fig. 3: error and δ vs T",
            labels={"threat model": "{threat_model}"},
        ),
        pdf=f"{RESULTS}/figures/fig3_{{threat_model}}.pdf",
    log:
        f"{LOGS}/figures/fig3_{{threat_model}}.log",
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        cfg=global_params("datasets"),
        code=code_of("ddppm_figure_fig3.py", methods=DDPPM_USES),
    script:
        "../../scripts/ddppm_figure_fig3.py"


rule fig3:
    """Fig. 3 under every threat model of methods.ddppm.threat_models."""
    input:
        DDPPM_FIG3,


localrules:
    ddppm_params,
    figure_fig3,
    fig3,


rule figure_frontier:
    """D-DP-PM's calibration frontier at ε = methods.ddppm.delta_curve.eps: error against δ of every candidate."""
    input:
        calibrations=lambda wc: expand(
            f"{RESULTS}/methods/ddppm/{{dataset}}/{{threat_model}}/calibration.parquet",
            dataset=DATASETS,
            threat_model=wc.threat_model,
        ),
        candidates=lambda wc: expand(
            f"{RESULTS}/methods/ddppm/{{dataset}}/{{threat_model}}/candidates.parquet",
            dataset=DATASETS,
            threat_model=wc.threat_model,
        ),
        floors=[path for paths in DDPPM_FLOORS.values() for path in paths],
        references=lambda wc: DECLARED.collect("frontier_references"),
    output:
        png=report(
            f"{RESULTS}/figures/frontier_{{threat_model}}.png",
            caption="../../report/frontier.rst",
            category="D-DP-PM calibration frontier",
            labels={"threat model": "{threat_model}"},
        ),
        pdf=f"{RESULTS}/figures/frontier_{{threat_model}}.pdf",
    log:
        f"{LOGS}/figures/frontier_{{threat_model}}.log",
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        cfg=global_params("datasets", "methods.ddppm.delta_curve.eps", "threat_models"),
        code=code_of("ddppm_figure_frontier.py", methods=DDPPM_USES),
    script:
        "../../scripts/ddppm_figure_frontier.py"


rule frontier:
    """The calibration frontier under every threat model of methods.ddppm.threat_models."""
    input:
        DDPPM_FRONTIER,


localrules:
    figure_frontier,
    frontier,


rule ddppm_floor:
    """D-DP-PM: the δ floor no parameters get under (releases without added noise, worst neighbour found)."""
    input:
        **problem_files(),
    output:
        f"{RESULTS}/methods/ddppm/{{dataset}}/floor.parquet",
    log:
        f"{LOGS}/ddppm_floor/{{dataset}}.log",
    benchmark:
        f"{BENCH}/ddppm_floor/{{dataset}}.tsv"
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        cfg=params_of("epsilons", "delta_limits", "methods.ddppm.privacy.floor"),
        code=code_of("ddppm_floor.py", methods=DDPPM_USES),
    script:
        "../../scripts/ddppm_floor.py"


rule ddppm_floor_table:
    """D-DP-PM: every data set's δ floors, as CSV and as an HTML table for the report."""
    input:
        expand(f"{RESULTS}/methods/ddppm/{{dataset}}/floor.parquet", dataset=DATASETS),
    output:
        csv=f"{RESULTS}/tables/floor.csv",
        html=report(
            f"{RESULTS}/tables/floor.html",
            caption="../../report/floor.rst",
            category="Tables",
            subcategory="D-DP-PM δ floors",
            labels={"table": "floor"},
        ),
    log:
        f"{LOGS}/tables/floor.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        cfg=global_params("datasets"),
        code=code_of("ddppm_floor_table.py", methods=DDPPM_USES),
    script:
        "../../scripts/ddppm_floor_table.py"


rule ddppm_common_floor:
    """D-DP-PM: the network view's δ floor on a data set only the common task runs, on the common task's ε grid."""
    input:
        **problem_files(),
    output:
        f"{RESULTS}/methods/ddppm/{{dataset}}/common_floor.parquet",
    log:
        f"{LOGS}/ddppm_floor/common_{{dataset}}.log",
    benchmark:
        f"{BENCH}/ddppm_floor/common_{{dataset}}.tsv"
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        cfg=lambda wc: job_params(
            {**dataset_config(config, wc.dataset), "common": config["common"]},
            None,
            ("common.epsilons", "common.delta", "methods.ddppm.privacy.floor"),
        ),
        code=code_of("ddppm_common_floor.py", methods=DDPPM_USES),
    script:
        "../../scripts/ddppm_common_floor.py"


rule ddppm_common_searched:
    """D-DP-PM (journal and workshop) on the common task: calibrated to the common δ under a searched threat model on
    one data set, and its runs (agent 0's consensus of the last z as the estimate)."""
    input:
        **problem_files(),
    output:
        runs=f"{RESULTS}/methods/ddppm/{{dataset}}/common_searched.parquet",
        params=f"{RESULTS}/methods/ddppm/{{dataset}}/common_searched_params.parquet",
    log:
        f"{LOGS}/ddppm_common_searched/{{dataset}}.log",
    benchmark:
        f"{BENCH}/ddppm_common_searched/{{dataset}}.tsv"
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        cfg=lambda wc: job_params(
            config,
            None,
            (
                "common.epsilons",
                "common.delta",
                "common.runs",
                "common.seed",
                "common.searched",
                "workshop.method_options",
                "workshop.budget",
                "workshop.threat_models",
                "threat_models",
            ),
        ),
        code=code_of("ddppm_common_searched.py", methods=DDPPM_SEARCHED_USES),
    script:
        "../../scripts/ddppm_common_searched.py"


rule ddppm_common_bounds:
    """D-DP-PM on the common task: its δ floors (network view) as lower bounds for every parameter choice."""
    input:
        expand(f"{RESULTS}/methods/ddppm/{{dataset}}/floor.parquet", dataset=DATASETS),
        expand(f"{RESULTS}/methods/ddppm/{{dataset}}/common_floor.parquet", dataset=DDPPM_COMMON_ONLY),
    output:
        f"{RESULTS}/methods/ddppm/common_bounds.parquet",
    log:
        f"{LOGS}/ddppm_common_bounds.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        cfg=global_params("datasets", "common.datasets"),
        code=code_of("ddppm_common_bounds.py", methods=DDPPM_USES),
    script:
        "../../scripts/ddppm_common_bounds.py"


rule floor:
    """The δ floors of every data set (table and report page)."""
    input:
        rules.ddppm_floor_table.output,


# What this file adds to the default target, the report, Fig. 2 and the common task (DECLARED, common.smk): the
# landing page's verdict reads the floors and the δ-vs-T curves of every threat model (Fig. 3's data).
DECLARED.declare(
    "methods/ddppm.smk",
    targets=DDPPM_FIG3 + DDPPM_FRONTIER + [f"{RESULTS}/tables/floor.csv", f"{RESULTS}/tables/floor.html"],
    provenance=[
        f"{RESULTS}/methods/ddppm/{ds}/{tm}/{name}.parquet"
        for ds in DATASETS
        for tm in DDPPM_THREAT_MODELS(ds)
        for name in ("calibration", "delta_vs_T")
    ]
    + [f"{RESULTS}/methods/ddppm/{ds}/floor.parquet" for ds in DATASETS],
    verdict=[f"{RESULTS}/tables/floor.csv"]
    + [
        f"{RESULTS}/methods/ddppm/{ds}/{tm}/delta_vs_T.parquet"
        for ds in DATASETS
        for tm in DDPPM_THREAT_MODELS(DATASETS[0])
    ],
    fig2_floors=DDPPM_FLOORS,
    common_lower_bounds=[f"{RESULTS}/methods/ddppm/common_bounds.parquet"],
    common_searched_runs=[f"{RESULTS}/methods/ddppm/{ds}/common_searched.parquet" for ds in DDPPM_COMMON_SEARCHED],
)


localrules:
    ddppm_floor_table,
    floor,
