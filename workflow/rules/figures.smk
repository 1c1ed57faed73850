rule figure_fig2_panel:
    input:
        errors=f"{RESULTS}/tables/errors_{{dataset}}.parquet",
        calibration=f"{RESULTS}/calibration/{{dataset}}.parquet",
        data=f"{RESULTS}/data/{{dataset}}/normalized.parquet",
    output:
        png=report(
            f"{RESULTS}/figures/fig2_{{dataset}}.png",
            caption="../report/fig2_panel.rst",
            category="Fig. 2: error vs ε",
            labels={"dataset": "{dataset}"},
        ),
        pdf=f"{RESULTS}/figures/fig2_{{dataset}}.pdf",
    params:
        config_hash=lambda wc: dataset_config(config, wc.dataset)["config_hash"],
    log:
        f"{LOGS}/figures/fig2_{{dataset}}.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/ddppm.yaml"
    script:
        "../scripts/figure_fig2.py"


rule figure_fig2:
    input:
        unpack(summary_inputs),
        data=expand(f"{RESULTS}/data/{{dataset}}/normalized.parquet", dataset=DATASETS),
    output:
        png=report(f"{RESULTS}/figures/fig2.png", caption="../report/fig2.rst", category="Fig. 2: error vs ε"),
        pdf=f"{RESULTS}/figures/fig2.pdf",
    params:
        config_hash=run_config_hash,
    log:
        f"{LOGS}/figures/fig2.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/ddppm.yaml"
    script:
        "../scripts/figure_fig2.py"


rule figure_fig3:
    input:
        curves=expand(f"{RESULTS}/privacy/{{dataset}}/delta_vs_T.parquet", dataset=DATASETS),
    output:
        png=report(f"{RESULTS}/figures/fig3.png", caption="../report/fig3.rst", category="Fig. 3: error and δ vs T"),
        pdf=f"{RESULTS}/figures/fig3.pdf",
    params:
        config_hash=run_config_hash,
    log:
        f"{LOGS}/figures/fig3.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/ddppm.yaml"
    script:
        "../scripts/figure_fig3.py"


rule summary_table:
    input:
        unpack(summary_inputs),
    output:
        report(f"{RESULTS}/tables/summary.csv", caption="../report/summary.rst", category="Tables"),
    params:
        config_hash=run_config_hash,
    log:
        f"{LOGS}/tables/summary.log",
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/ddppm.yaml"
    script:
        "../scripts/summary_table.py"


rule fig2:
    input:
        expand(f"{RESULTS}/figures/fig2.{{ext}}", ext=("png", "pdf")),
        expand(f"{RESULTS}/figures/fig2_{{dataset}}.{{ext}}", dataset=DATASETS, ext=("png", "pdf")),


rule fig3:
    input:
        expand(f"{RESULTS}/figures/fig3.{{ext}}", ext=("png", "pdf")),


rule tables:
    input:
        f"{RESULTS}/tables/summary.csv",
