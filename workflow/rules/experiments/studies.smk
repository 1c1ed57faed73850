# Experiment studies: the scale studies (docs/studies.md): the common task as the number of agents, the topology
# and the gossip rounds grow. Built by `snakemake all_studies`; never part of the default run. Config section
# `studies`.

STUDIES_EXPERIMENT = get_experiment("studies")
STUDIES_USES = STUDIES_EXPERIMENT.methods_used(config)  # the registry entries its jobs use (rule code)
STUDIES = f"{RESULTS}/studies"
STUDY_NAMES = list(config["studies"]["studies"])
STUDY_KEYS = tuple(
    f"studies.{k}" for k in ("data", "methods", "epsilons", "delta", "adjacency", "k", "iterations", "runs", "seed")
)
# The agents study's searched D-DP-PM variants take their options from the workshop experiment, as on the common task.
STUDY_CONTEXT = {"agents": ("workshop", "threat_models")}
STUDY_TARGETS = [f"{STUDIES}/{name}/summary.csv" for name in STUDY_NAMES] + [
    f"{STUDIES}/{name}/figure.png" for name in STUDY_NAMES
]


rule study_runs:
    """Scale study: every run of every method at every point of one study."""
    output:
        f"{STUDIES}/{{study}}/runs.parquet",
    log:
        f"{LOGS}/studies/{{study}}_runs.log",
    benchmark:
        f"{BENCH}/studies/{{study}}_runs.tsv"
    wildcard_constraints:
        study="|".join(STUDY_NAMES),
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=4000,
        runtime=30,
    params:
        cfg=lambda wc: job_params(config, None, (*STUDY_KEYS, f"studies.{wc.study}", *STUDY_CONTEXT.get(wc.study, ()))),
        code=code_of("study_runs.py", methods=STUDIES_USES),
    script:
        "../../scripts/study_runs.py"


rule study_summary:
    """Scale study: the summary per point, method and ε, and the findings."""
    input:
        f"{STUDIES}/{{study}}/runs.parquet",
    output:
        csv=f"{STUDIES}/{{study}}/summary.csv",
        page=report(
            html_twin(f"{STUDIES}/{{study}}/summary.csv"),
            caption="../../report/study_summary.rst",
            category=STUDIES_EXPERIMENT.title,
            subcategory="{study}",
            labels={"table": "{study}"},
        ),
        parquet=f"{STUDIES}/{{study}}/summary.parquet",
        findings=f"{STUDIES}/{{study}}/findings.txt",
    log:
        f"{LOGS}/studies/{{study}}_summary.log",
    wildcard_constraints:
        study="|".join(STUDY_NAMES),
    conda:
        "../../envs/ddppm.yaml"
    params:
        cfg=lambda wc: job_params(config, None, (f"studies.{wc.study}",)),  # the samples study's claims
        code=code_of("study_summary.py", methods=STUDIES_USES),
    script:
        "../../scripts/study_summary.py"


rule study_figure:
    """Scale study: its figure (error against m, the network, c or k; the samples study's against n and d)."""
    input:
        f"{STUDIES}/{{study}}/summary.parquet",
    output:
        png=report(
            f"{STUDIES}/{{study}}/figure.png",
            caption="../../report/study_figure.rst",
            category=STUDIES_EXPERIMENT.title,
            subcategory="{study}",
            labels={"figure": "{study}"},
        ),
        pdf=f"{STUDIES}/{{study}}/figure.pdf",
    log:
        f"{LOGS}/studies/{{study}}_figure.log",
    wildcard_constraints:
        study="|".join(STUDY_NAMES),
    conda:
        "../../envs/ddppm.yaml"
    params:
        cfg=global_params("studies.delta", "studies.adjacency", "studies.runs", "studies.views"),
        code=code_of("study_figure.py", methods=STUDIES_USES),
    script:
        "../../scripts/study_figure.py"


rule all_studies:
    """Every scale study and the studies other rule files declare (the bounds study): tables, findings and figures
    (not part of the default run)."""
    input:
        STUDY_TARGETS,
        lambda wc: DECLARED.collect("all_studies"),


localrules:
    study_summary,
    study_figure,
    all_studies,
