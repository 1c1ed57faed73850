# The repaired D-DP-PM (docs/certified.md): its parameters come from rule method_params like any closed-form
# method; this file adds its certified frontier (error against δ, every ε, best T), which the journal method's
# calibration-frontier figure draws beside its own candidates.

CERTIFIED_FRONTIERS = [f"{RESULTS}/methods/ddppm_certified/{ds}/frontier.parquet" for ds in DATASETS]
DECLARED.declare("methods/ddppm_certified.smk", frontier_references=CERTIFIED_FRONTIERS)


rule ddppm_certified_frontier:
    """Certified D-DP-PM: the best error at each (ε, δ) of its frontier grid, δ for every neighbour and observer."""
    input:
        **problem_files(),
    output:
        f"{RESULTS}/methods/ddppm_certified/{{dataset}}/frontier.parquet",
    log:
        f"{LOGS}/methods/ddppm_certified/{{dataset}}/frontier.log",
    benchmark:
        f"{BENCH}/methods/ddppm_certified/{{dataset}}/frontier.tsv"
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        cfg=params_of("epsilons", "methods.ddppm_certified"),
        code=code_of("ddppm_certified_frontier.py", methods=["ddppm_certified"]),
    script:
        "../../scripts/ddppm_certified_frontier.py"
