rule calibrate:
    input:
        data=f"{RESULTS}/data/{{dataset}}/normalized.parquet",
        partition=f"{RESULTS}/data/{{dataset}}/partition.parquet",
        network=f"{RESULTS}/data/{{dataset}}/network.parquet",
    output:
        chosen=f"{RESULTS}/calibration/{{dataset}}.parquet",
        candidates=f"{RESULTS}/calibration/{{dataset}}_candidates.parquet",
    params:
        cfg=ds_cfg,
    log:
        f"{LOGS}/calibrate/{{dataset}}.log",
    benchmark:
        f"{BENCH}/calibrate/{{dataset}}.tsv"
    threads: 1
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../envs/ddppm.yaml"
    script:
        "../scripts/calibrate.py"
