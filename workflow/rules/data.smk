rule prepare_dataset:
    output:
        f"{RESULTS}/data/{{dataset}}/normalized.parquet",
    params:
        cfg=ds_params("dataset",),
    log:
        f"{LOGS}/prepare_dataset/{{dataset}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/ddppm.yaml"
    script:
        "../scripts/prepare_dataset.py"


rule partition:
    input:
        f"{RESULTS}/data/{{dataset}}/normalized.parquet",
    output:
        partition=f"{RESULTS}/data/{{dataset}}/partition.parquet",
        network=f"{RESULTS}/data/{{dataset}}/network.parquet",
    params:
        cfg=ds_params("partition", "network"),
    log:
        f"{LOGS}/partition/{{dataset}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/ddppm.yaml"
    script:
        "../scripts/partition.py"
