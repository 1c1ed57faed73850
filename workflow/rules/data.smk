rule prepare_dataset:
    """Load one dataset and bring every row into the unit ball (standardise, then scale)."""
    input:
        local_file,
    output:
        f"{RESULTS}/data/{{dataset}}/normalized.parquet",
    log:
        f"{LOGS}/prepare_dataset/{{dataset}}.log",
    conda:
        "../envs/ddppm.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        cfg=params_of("dataset"),
        code=code_of("prepare_dataset.py", methods=[]),
    script:
        "../scripts/prepare_dataset.py"


rule partition:
    """Split the rows among the agents (seeded) and build the mixing matrix W (Assumption 2 checked)."""
    input:
        f"{RESULTS}/data/{{dataset}}/normalized.parquet",
    output:
        partition=f"{RESULTS}/data/{{dataset}}/partition.parquet",
        network=f"{RESULTS}/data/{{dataset}}/network.parquet",
    log:
        f"{LOGS}/partition/{{dataset}}.log",
    conda:
        "../envs/ddppm.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        cfg=params_of("partition", "network"),
        code=code_of("partition.py", methods=[]),
    script:
        "../scripts/partition.py"


rule other_results_dir:
    """A path under another configuration's results directory: stop with a hint (not Snakemake's no rule)."""
    input:
        other_results_hint(RESULTS),
    output:
        "{other_results}/{path}",
    log:
        f"{LOGS}/other_results_dir/{{other_results}}/{{path}}.log",
    wildcard_constraints:
        other_results="|".join(d for d in ("results", "results-tiny") if d != RESULTS),
        path=".+",
