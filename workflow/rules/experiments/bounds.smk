# Experiment bounds (docs/bounds.md): the price of loose bounds. Built by `snakemake bounds_study` (and all_studies);
# never part of the default run. Each rule runs one step of ddppm.experiments.bounds through the generic script.
BOUNDS = f"{RESULTS}/bounds"
BOUNDS_EXPERIMENT = get_experiment("bounds")
BOUNDS_USES = BOUNDS_EXPERIMENT.methods_used(config)
BOUNDS_DATASETS = list(config["bounds"]["datasets"])
BOUNDS_KEYS = ("bounds", "common.delta", "common.adjacency", "common.iterations", "common.seed", "common.preprocessing")
BOUNDS_FIGURES = [f"{BOUNDS}/figures/{ds}.png" for ds in BOUNDS_DATASETS]


rule bounds_runs:
    """Bounds study: every run of every method on one data set at every width factor and preprocessing estimator."""
    input:
        unpack(problem_files),
        records=local_file,
    output:
        runs=f"{BOUNDS}/runs/{{dataset}}.parquet",
    log:
        f"{LOGS}/bounds/runs/{{dataset}}.log",
    benchmark:
        f"{BENCH}/bounds/runs/{{dataset}}.tsv"
    wildcard_constraints:
        dataset="|".join(BOUNDS_DATASETS),
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=3000,
        runtime=30,
    params:
        **step_params("bounds.runs", *BOUNDS_KEYS, methods=BOUNDS_USES),
        records=lambda wc: job_params(config, wc.dataset, ("dataset",)),
    script:
        "../../scripts/experiment_step.py"


rule bounds_summary:
    """Bounds study: every point in one table, and the findings (the targets judged)."""
    input:
        runs=expand(f"{BOUNDS}/runs/{{dataset}}.parquet", dataset=BOUNDS_DATASETS),
    output:
        csv=f"{BOUNDS}/summary.csv",
        page=report(
            html_twin(f"{BOUNDS}/summary.csv"),
            caption="../../report/experiment.rst",
            category=BOUNDS_EXPERIMENT.title,
            labels={"table": "every method, width and estimator"},
        ),
        parquet=f"{BOUNDS}/summary.parquet",
        findings=f"{BOUNDS}/findings.txt",
    log:
        f"{LOGS}/bounds/summary.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        **step_params(
            "bounds.summary",
            "bounds",
            caption="Every data set, width factor of the declared bounds, preprocessing estimator, method, k and ε: "
            "mean error with its 95 % interval (over preprocessing draws), and the best method per trust level.",
        ),
    script:
        "../../scripts/experiment_step.py"


rule bounds_figure:
    """Bounds study: error against the bounds' width factor for one data set."""
    input:
        parquet=rules.bounds_summary.output.parquet,
    output:
        png=report(
            f"{BOUNDS}/figures/{{dataset}}.png",
            caption="../../report/experiment.rst",
            category=BOUNDS_EXPERIMENT.title,
            labels={"figure": "{dataset}"},
        ),
        pdf=f"{BOUNDS}/figures/{{dataset}}.pdf",
    log:
        f"{LOGS}/bounds/figures/{{dataset}}.log",
    wildcard_constraints:
        dataset="|".join(BOUNDS_DATASETS),
    conda:
        "../../envs/ddppm.yaml"
    params:
        **step_params(
            "bounds.figure",
            caption="Error against the factor by which the declared bounds are widened, per ε: per trust level "
            "the best method (solid: private box then sums; dashed: sums on the declared box), the curator's "
            "private standardisation alone (grey), chance (dotted).",
        ),
    script:
        "../../scripts/experiment_step.py"


rule bounds_study:
    """The bounds study: its table, findings and one figure per data set (not part of the default run)."""
    input:
        f"{BOUNDS}/summary.csv",
        f"{BOUNDS}/findings.txt",
        BOUNDS_FIGURES,


DECLARED.declare("experiments/bounds.smk", all_studies=[f"{BOUNDS}/findings.txt", *BOUNDS_FIGURES])


localrules:
    bounds_summary,
    bounds_figure,
    bounds_study,
