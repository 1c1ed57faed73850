# Experiment method_map (docs/method_map.md): where each method wins. Built by `snakemake method_map`; never part
# of the default run. Each rule runs one step of ddppm.experiments.method_map through the generic script.
from ddppm.experiments.method_map import section_shapes

METHOD_MAP = f"{RESULTS}/method_map"
METHOD_MAP_EXPERIMENT = get_experiment("method_map")
METHOD_MAP_TITLE = METHOD_MAP_EXPERIMENT.title
METHOD_MAP_USES = METHOD_MAP_EXPERIMENT.methods_used(config)
METHOD_MAP_SHAPES = list(section_shapes(config["method_map"]))
METHOD_MAP_FIGURES = [f"{METHOD_MAP}/figures/{factor}_eps.png" for factor in config["method_map"]["grids"]] + [
    f"{METHOD_MAP}/figures/factors.png"
]


rule method_map_shape:
    """Method map: every paired run of every certified method at every ε on one public shape, and its cells."""
    output:
        runs=f"{METHOD_MAP}/shapes/{{shape}}/runs.parquet",
        cells=f"{METHOD_MAP}/shapes/{{shape}}/cells.parquet",
    log:
        f"{LOGS}/method_map/{{shape}}.log",
    benchmark:
        f"{BENCH}/method_map/{{shape}}.tsv"
    wildcard_constraints:
        shape="|".join(METHOD_MAP_SHAPES),
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=4000,
        runtime=20,
    params:
        **step_params("method_map.shape", "method_map", methods=METHOD_MAP_USES),
    script:
        "../../scripts/experiment_step.py"


rule method_map_summary:
    """Method map: every cell (best method, competitive set, chance) in one table, and the findings."""
    input:
        cells=expand(f"{METHOD_MAP}/shapes/{{shape}}/cells.parquet", shape=METHOD_MAP_SHAPES),
    output:
        csv=f"{METHOD_MAP}/cells.csv",
        page=report(
            html_twin(f"{METHOD_MAP}/cells.csv"),
            caption="../../report/experiment.rst",
            category=METHOD_MAP_TITLE,
            labels={"table": "cells"},
        ),
        parquet=f"{METHOD_MAP}/cells.parquet",
        findings=f"{METHOD_MAP}/findings.txt",
    log:
        f"{LOGS}/method_map/summary.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        **step_params(
            "method_map.summary",
            "method_map",
            caption="Every cell of the method map: per shape, ε and trust level, the best method, the competitive "
            "set (methods not significantly worse, 95 % paired intervals), whether any method beats chance, and "
            "the paired draws it rests on.",
        ),
    script:
        "../../scripts/experiment_step.py"


rule method_map_grid:
    """Method map: the phase map of the winner and the competitive set's size over one factor and ε."""
    input:
        csv=rules.method_map_summary.output.csv,
    output:
        png=report(
            f"{METHOD_MAP}/figures/{{factor}}_eps.png",
            caption="../../report/experiment.rst",
            category=METHOD_MAP_TITLE,
            labels={"figure": "{factor} and ε"},
        ),
        pdf=f"{METHOD_MAP}/figures/{{factor}}_eps.pdf",
    log:
        f"{LOGS}/method_map/{{factor}}_eps.log",
    wildcard_constraints:
        factor="n|d|gap|m|k",
    conda:
        "../../envs/ddppm.yaml"
    params:
        **step_params(
            "method_map.grid",
            "method_map",
            "common.datasets",
            caption="Which method wins over one factor and ε, per trust level: colour, the best mean error; "
            "number, the methods not significantly worse (95 % paired intervals); grey hatched, no method beats "
            "chance; dotted, the common task's data sets at their n or d.",
        ),
    script:
        "../../scripts/experiment_step.py"


rule method_map_factors:
    """Method map: one factor at a time from the base point, per trust level."""
    input:
        csv=rules.method_map_summary.output.csv,
    output:
        png=report(
            f"{METHOD_MAP}/figures/factors.png",
            caption="../../report/experiment.rst",
            category=METHOD_MAP_TITLE,
            labels={"figure": "one factor at a time"},
        ),
        pdf=f"{METHOD_MAP}/figures/factors.pdf",
    log:
        f"{LOGS}/method_map/factors.log",
    conda:
        "../../envs/ddppm.yaml"
    params:
        **step_params(
            "method_map.factors",
            "method_map",
            caption="Which method wins, one factor at a time from the base point, per trust level (colour: the "
            "best; number: the competitive set's size; grey hatched: no method beats chance).",
        ),
    script:
        "../../scripts/experiment_step.py"


rule method_map:
    """The method map: its cells, findings and figures (not part of the default run)."""
    input:
        f"{METHOD_MAP}/cells.csv",
        f"{METHOD_MAP}/findings.txt",
        METHOD_MAP_FIGURES,


localrules:
    method_map_summary,
    method_map_grid,
    method_map_factors,
    method_map,
