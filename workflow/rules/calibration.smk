rule calibrate_chunk:
    input:
        data=f"{RESULTS}/data/{{dataset}}/normalized.parquet",
        partition=f"{RESULTS}/data/{{dataset}}/partition.parquet",
        network=f"{RESULTS}/data/{{dataset}}/network.parquet",
    output:
        temp(f"{RESULTS}/calibration/{{dataset}}/coarse~{{chunk}}.parquet"),
    params:
        cfg=ds_params("epsilons", "delta_limits", "calibration", "privacy"),
    log:
        f"{LOGS}/calibrate_chunk/{{dataset}}/coarse~{{chunk}}.log",
    benchmark:
        f"{BENCH}/calibrate_chunk/{{dataset}}/coarse~{{chunk}}.tsv"
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../envs/ddppm.yaml"
    script:
        "../scripts/calibrate_chunk.py"


rule calibrate:
    input:
        data=f"{RESULTS}/data/{{dataset}}/normalized.parquet",
        partition=f"{RESULTS}/data/{{dataset}}/partition.parquet",
        network=f"{RESULTS}/data/{{dataset}}/network.parquet",
        coarse=lambda wc: expand(
            f"{RESULTS}/calibration/{{dataset}}/coarse~{{chunk}}.parquet",
            dataset=wc.dataset,
            chunk=range(calibration_chunks(wc.dataset)),
        ),
    output:
        chosen=f"{RESULTS}/calibration/{{dataset}}.parquet",
        candidates=f"{RESULTS}/calibration/{{dataset}}_candidates.parquet",
    params:
        cfg=ds_params("epsilons", "delta_limits", "calibration", "privacy"),
    log:
        f"{LOGS}/calibrate/{{dataset}}.log",
    benchmark:
        f"{BENCH}/calibrate/{{dataset}}.tsv"
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../envs/ddppm.yaml"
    script:
        "../scripts/calibrate.py"
