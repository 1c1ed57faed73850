# Experiment radius (docs/studies.md, "The clipping radius"): the clipping radius, fixed against private. Built by
# `snakemake radius_study` (and all_studies); never part of the default run. Each rule runs one step of
# ddppm.experiments.radius through the generic script.
from ddppm.experiments.radius import radius_datasets

RADIUS = f"{RESULTS}/radius"
RADIUS_EXPERIMENT = get_experiment("radius")
RADIUS_USES = RADIUS_EXPERIMENT.methods_used(config)
RADIUS_DATASETS, RADIUS_SKIPPED = radius_datasets(config)
RADIUS_KEYS = ("radius", "common.delta", "common.adjacency", "common.iterations", "common.seed", "common.preprocessing")
RADIUS_TARGETS = [f"{RADIUS}/summary.csv", f"{RADIUS}/findings.txt", f"{RADIUS}/figure.png"]


rule radius_runs:
    """Radius study: every run of the compared methods on one data set under the fixed and the private radius."""
    input:
        unpack(problem_files),
        records=local_file,
    output:
        runs=f"{RADIUS}/runs/{{dataset}}.parquet",
    log:
        f"{LOGS}/radius/runs/{{dataset}}.log",
    benchmark:
        f"{BENCH}/radius/runs/{{dataset}}.tsv"
    wildcard_constraints:
        dataset="|".join(RADIUS_DATASETS),
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=2000,
        runtime=20,
    params:
        **step_params("radius.runs", *RADIUS_KEYS, methods=RADIUS_USES),
        records=lambda wc: job_params(config, wc.dataset, ("dataset",)),
    script:
        "../../scripts/experiment_step.py"


rule radius_summary:
    """Radius study: every point in one table, and the findings (each data set's errors, the targets judged)."""
    input:
        runs=expand(f"{RADIUS}/runs/{{dataset}}.parquet", dataset=RADIUS_DATASETS),
    output:
        csv=f"{RADIUS}/summary.csv",
        page=report(
            html_twin(f"{RADIUS}/summary.csv"),
            caption="../../report/experiment.rst",
            category=RADIUS_EXPERIMENT.title,
            labels={"table": "every data set, radius, method, k and ε"},
        ),
        parquet=f"{RADIUS}/summary.parquet",
        findings=f"{RADIUS}/findings.txt",
    log:
        f"{LOGS}/radius/summary.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        **step_params(
            "radius.summary",
            "radius",
            caption="Every data set, clipping radius (fixed c√d or private), method, k and ε, from the raw records: "
            "mean error with its 95 % interval (Student's t over the preprocessing draws).",
        ),
        skipped=RADIUS_SKIPPED,
    script:
        "../../scripts/experiment_step.py"


rule radius_figure:
    """Radius study: error against ε on every data set and k, fixed against private radius."""
    input:
        parquet=rules.radius_summary.output.parquet,
    output:
        png=report(
            f"{RADIUS}/figure.png",
            caption="../../report/experiment.rst",
            category=RADIUS_EXPERIMENT.title,
            labels={"figure": "error against ε"},
        ),
        pdf=f"{RADIUS}/figure.pdf",
    log:
        f"{LOGS}/radius/figure.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        **step_params(
            "radius.figure",
            "radius.methods",
            "common.adjacency",
            caption="Mean error against ε (log axes) per data set (rows) and k (columns), from the raw records, "
            "certified (ε, δ = common.delta)-DP for one replaced record: per method, the private clipping radius "
            "(solid) against the fixed radius c√d (dashed); bands are 95 % intervals of the mean over the "
            "preprocessing draws (Student's t), both radii drawn from the same seeds.",
        ),
    script:
        "../../scripts/experiment_step.py"


rule radius_study:
    """The radius study: its table, findings and figure (not part of the default run)."""
    input:
        RADIUS_TARGETS,


DECLARED.declare("experiments/radius.smk", all_studies=[f"{RADIUS}/findings.txt", f"{RADIUS}/figure.png"])


localrules:
    radius_summary,
    radius_figure,
    radius_study,
