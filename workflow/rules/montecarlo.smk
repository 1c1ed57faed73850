rule method_params:
    """Parameters of a closed-form method (no calibration) at every ε and its δ limit."""
    input:
        **problem_files(),
    output:
        f"{RESULTS}/params/{{dataset}}/{{method}}.parquet",
    log:
        f"{LOGS}/method_params/{{dataset}}/{{method}}.log",
    wildcard_constraints:
        method="|".join(CLOSED_FORM_METHODS) or "no-closed-form-method",
    conda:
        "../envs/ddppm.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        cfg=params_of("epsilons", "delta_limits", "methods.{method}"),
        code=code_of("method_params.py", methods="wildcard"),
    script:
        "../scripts/method_params.py"


rule montecarlo_chunk:
    """One chunk of the Monte-Carlo runs of one (dataset, method), at every ε and for every threat model: only when
    `montecarlo.chunks` > 1 (a cluster); rule montecarlo gathers the chunks.

    The chunk count is in the file name, not in the params: re-sharding names new (temporary) files and
    leaves every finished merged result alone.
    """
    input:
        **problem_files(),
        params=f"{RESULTS}/params/{{dataset}}/{{method}}.parquet",
    output:
        temp(f"{RESULTS}/runs/{{dataset}}/{{method}}/chunk~{{chunk}}-of-{{chunks}}.parquet"),
    log:
        f"{LOGS}/montecarlo/{{dataset}}/{{method}}/chunk~{{chunk}}-of-{{chunks}}.log",
    benchmark:
        f"{BENCH}/montecarlo/{{dataset}}/{{method}}/chunk~{{chunk}}-of-{{chunks}}.tsv"
    conda:
        "../envs/ddppm.yaml"
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        cfg=params_of("montecarlo.runs", "montecarlo.seed", "methods.{method}"),
        code=code_of("montecarlo_chunk.py", methods="wildcard"),
    script:
        "../scripts/montecarlo_chunk.py"


rule montecarlo:
    """The Monte-Carlo runs of one (dataset, method) at every ε: computed by this one job when `montecarlo.chunks`
    is 1 (one interpreter start for every ε), else gathered from the chunks in run order (bit-identical)."""
    input:
        unpack(montecarlo_inputs),
    output:
        f"{RESULTS}/runs/{{dataset}}/{{method}}.parquet",
    log:
        f"{LOGS}/montecarlo/{{dataset}}/{{method}}.log",
    benchmark:
        f"{BENCH}/montecarlo/{{dataset}}/{{method}}.tsv"
    conda:
        "../envs/ddppm.yaml"
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        # The chunks are temporary: this job carries what they read, so a change reruns it and them.
        cfg=params_of("montecarlo.runs", "montecarlo.seed", "methods.{method}"),
        code=code_of("montecarlo_chunk.py", "montecarlo.py", methods="wildcard"),
    script:
        "../scripts/montecarlo.py"


rule summarize_runs:
    """Mean error with its bands per (method, threat model, ε), for one dataset."""
    input:
        lambda wc: expand(f"{RESULTS}/runs/{{dataset}}/{{method}}.parquet", dataset=wc.dataset, method=METHODS),
    output:
        f"{RESULTS}/tables/errors_{{dataset}}.parquet",
    log:
        f"{LOGS}/summarize_runs/{{dataset}}.log",
    conda:
        "../envs/ddppm.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        cfg=params_of("montecarlo.runs", "montecarlo.methods", "epsilons"),
        code=code_of("summarize_runs.py", methods=METHODS),
    script:
        "../scripts/summarize_runs.py"


localrules:
    summarize_runs,
    method_params,
