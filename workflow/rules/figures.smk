rule figure_fig2_panel:
    """Fig. 2 for one dataset: error against ε for every method and threat model."""
    input:
        errors=f"{RESULTS}/tables/errors_{{dataset}}.parquet",
        data=f"{RESULTS}/data/{{dataset}}/normalized.parquet",
        floors=lambda wc: DECLARED.fig2_floors(wc.dataset),
    output:
        png=report(
            f"{RESULTS}/figures/fig2_{{dataset}}.png",
            caption="../report/fig2_panel.rst",
            category="Fig. 2: error vs ε",
            labels={"dataset": "{dataset}"},
        ),
        pdf=f"{RESULTS}/figures/fig2_{{dataset}}.pdf",
    log:
        f"{LOGS}/figures/fig2_{{dataset}}.log",
    conda:
        "../envs/ddppm.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        layout="single",
        cfg=params_of("montecarlo.methods", "epsilons", "delta_limits", "threat_models"),
        code=code_of("figure_fig2.py", methods=METHODS),
    script:
        "../scripts/figure_fig2.py"


rule figure_fig2:
    """Fig. 2 of the journal paper: one panel per dataset, one shared legend."""
    input:
        unpack(summary_inputs),
        data=expand(f"{RESULTS}/data/{{dataset}}/normalized.parquet", dataset=DATASETS),
        floors=lambda wc: [path for ds in DATASETS for path in DECLARED.fig2_floors(ds)],
    output:
        png=report(f"{RESULTS}/figures/fig2.png", caption="../report/fig2.rst", category="Fig. 2: error vs ε"),
        pdf=f"{RESULTS}/figures/fig2.pdf",
    log:
        f"{LOGS}/figures/fig2.log",
    conda:
        "../envs/ddppm.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        layout="grid",
        cfg=global_params("datasets", "threat_models"),
        code=code_of("figure_fig2.py", methods=METHODS),
    script:
        "../scripts/figure_fig2.py"


rule summary_table:
    """summary.csv: one row per (dataset, ε, method, threat model) with error, δ achieved and δ limit."""
    input:
        unpack(summary_inputs),
    output:
        csv=f"{RESULTS}/tables/summary.csv",
        page=report(
            html_twin(f"{RESULTS}/tables/summary.csv"),
            caption="../report/summary.rst",
            category="Tables",
            labels={"table": "summary"},
        ),
    log:
        f"{LOGS}/tables/summary.log",
    conda:
        "../envs/ddppm.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        cfg=global_params("datasets"),
        code=code_of("summary_table.py", methods=METHODS),
    script:
        "../scripts/summary_table.py"


rule fig2:
    """Fig. 2: the grid and one file per dataset."""
    input:
        expand(f"{RESULTS}/figures/fig2.{{ext}}", ext=("png", "pdf")),
        expand(f"{RESULTS}/figures/fig2_{{dataset}}.{{ext}}", dataset=DATASETS, ext=("png", "pdf")),


rule tables:
    """The summary table."""
    input:
        f"{RESULTS}/tables/summary.csv",


localrules:
    fig2,
    tables,
    figure_fig2_panel,
    figure_fig2,
    summary_table,
