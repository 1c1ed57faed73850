# What the HTML report shows besides the figures: the landing page with the findings, the tables as HTML, and
# the provenance of every table. `snakemake --report report.html` uses results/report/landing.rst once it exists.

# PROVENANCE_INPUTS and FINDINGS_INPUTS (common.smk) are completed by the method and experiment rule files.


rule summary_table_html:
    """One data set's rows of the summary table as an HTML page (viewable in the report)."""
    input:
        f"{RESULTS}/tables/errors_{{dataset}}.parquet",
    output:
        report(
            f"{RESULTS}/tables/summary_{{dataset}}.html",
            caption="../report/summary_dataset.rst",
            category="Tables",
            subcategory="Fig. 2 summary per data set",
            labels={"data set": "{dataset}", "table": "summary"},
        ),
    params:
        cfg=global_params("datasets"),
        code=code_of("summary_table_html.py", methods="all"),
    log:
        f"{LOGS}/tables/summary_{{dataset}}_html.log",
    conda:
        "../envs/ddppm.yaml"
    script:
        "../scripts/summary_table_html.py"


rule provenance_table:
    """Provenance of every table: config hash, git commit and versions, as CSV and HTML."""
    input:
        lambda wc: PROVENANCE_INPUTS,
    output:
        csv=f"{RESULTS}/report/provenance.csv",
        html=report(
            f"{RESULTS}/report/provenance.html",
            caption="../report/provenance.rst",
            category="Tables",
            subcategory="Provenance",
            labels={"table": "provenance"},
        ),
    params:
        cfg=global_params("datasets"),
        code=code_of("provenance_table.py"),
    log:
        f"{LOGS}/report/provenance.log",
    conda:
        "../envs/ddppm.yaml"
    script:
        "../scripts/provenance_table.py"


rule table_html:
    """A CSV table of the report as an HTML page the report shows (the CSV stays its download)."""
    input:
        f"{RESULTS}/{{table}}.csv",
    output:
        report(
            f"{RESULTS}/{{table}}.table.html",
            caption="../report/table_html.rst",
            category="Tables",
            subcategory="Every table as a page",
            labels={"table": "{table}"},
        ),
    params:
        code=code_of("table_html.py"),
    log:
        f"{LOGS}/report/table_html/{{table}}.log",
    wildcard_constraints:
        table=r"[A-Za-z0-9_/.~-]+",
    conda:
        "../envs/ddppm.yaml"
    script:
        "../scripts/table_html.py"


rule report_landing:
    """The report's landing page (the verdict, under one screen) and the page of every finding in full."""
    input:
        summary=f"{RESULTS}/tables/summary.csv",
        provenance=f"{RESULTS}/report/provenance.csv",
        findings=lambda wc: FINDINGS_INPUTS,
        verdict=lambda wc: VERDICT_INPUTS,
    output:
        landing=f"{RESULTS}/report/landing.rst",
        findings=report(
            f"{RESULTS}/report/findings.html",
            caption="../report/findings.rst",
            category="Findings",
            labels={"page": "every finding"},
        ),
    params:
        cfg=global_params("datasets", "threat_models", "montecarlo", "experiments", "verdict"),
        code=code_of("report_landing.py", methods="all"),
    log:
        f"{LOGS}/report/landing.log",
    conda:
        "../envs/ddppm.yaml"
    script:
        "../scripts/report_landing.py"


rule report_inputs:
    """Everything the HTML report shows (then: snakemake --report report.html)."""
    input:
        f"{RESULTS}/report/landing.rst",
        f"{RESULTS}/report/findings.html",
        f"{RESULTS}/report/provenance.html",
        expand(f"{RESULTS}/tables/summary_{{dataset}}.html", dataset=DATASETS),
        [html_twin(p) for p in REPORT_TABLES],


localrules:
    table_html,
    summary_table_html,
    provenance_table,
    report_landing,
