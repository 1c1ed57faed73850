rule delta_curve:
    input:
        data=f"{RESULTS}/data/{{dataset}}/normalized.parquet",
        partition=f"{RESULTS}/data/{{dataset}}/partition.parquet",
        network=f"{RESULTS}/data/{{dataset}}/network.parquet",
        calibration=f"{RESULTS}/calibration/{{dataset}}.parquet",
        candidates=f"{RESULTS}/calibration/{{dataset}}_candidates.parquet",
    output:
        f"{RESULTS}/privacy/{{dataset}}/delta_vs_T.parquet",
    params:
        cfg=ds_params("epsilons", "delta_limits", "delta_curve", "privacy", "montecarlo"),
    log:
        f"{LOGS}/delta_curve/{{dataset}}.log",
    benchmark:
        f"{BENCH}/delta_curve/{{dataset}}.tsv"
    resources:
        mem_mb=4000,
        runtime=60,
    conda:
        "../envs/ddppm.yaml"
    script:
        "../scripts/delta_curve.py"
