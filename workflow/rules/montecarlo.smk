rule montecarlo_chunk:
    input:
        data=f"{RESULTS}/data/{{dataset}}/normalized.parquet",
        partition=f"{RESULTS}/data/{{dataset}}/partition.parquet",
        network=f"{RESULTS}/data/{{dataset}}/network.parquet",
        calibration=f"{RESULTS}/calibration/{{dataset}}.parquet",
    output:
        temp(f"{RESULTS}/runs/{{dataset}}/{{method}}/eps~{{eps}}/chunk~{{chunk}}.parquet"),
    params:
        cfg=ds_params("epsilons", "delta_limits", "montecarlo"),
    log:
        f"{LOGS}/montecarlo/{{dataset}}/{{method}}/eps~{{eps}}/chunk~{{chunk}}.log",
    benchmark:
        f"{BENCH}/montecarlo/{{dataset}}/{{method}}/eps~{{eps}}/chunk~{{chunk}}.tsv"
    resources:
        mem_mb=2000,
        runtime=30,
    conda:
        "../envs/ddppm.yaml"
    script:
        "../scripts/montecarlo_chunk.py"


rule montecarlo:
    input:
        lambda wc: expand(
            f"{RESULTS}/runs/{{dataset}}/{{method}}/eps~{{eps}}/chunk~{{chunk}}.parquet",
            dataset=wc.dataset,
            method=wc.method,
            eps=wc.eps,
            chunk=range(mc_chunks(wc.dataset)),
        ),
    output:
        f"{RESULTS}/runs/{{dataset}}/{{method}}/eps~{{eps}}.parquet",
    params:
        cfg=ds_params("montecarlo",),
    log:
        f"{LOGS}/montecarlo_merge/{{dataset}}/{{method}}/eps~{{eps}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/ddppm.yaml"
    script:
        "../scripts/montecarlo_merge.py"


rule summarize_runs:
    input:
        lambda wc: expand(
            f"{RESULTS}/runs/{{dataset}}/{{method}}/eps~{{eps}}.parquet",
            dataset=wc.dataset,
            method=METHODS,
            eps=EPS_LABELS,
        ),
    output:
        f"{RESULTS}/tables/errors_{{dataset}}.parquet",
    params:
        cfg=ds_params("montecarlo",),
    log:
        f"{LOGS}/summarize_runs/{{dataset}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/ddppm.yaml"
    script:
        "../scripts/summarize_runs.py"
