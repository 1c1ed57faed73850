# What the HTML report shows besides the figures: the landing page with the findings, the tables as HTML, and
# the provenance of every table. `snakemake --report report.html` uses results/report/landing.rst once it exists.

# Their inputs are what the journal, the method and experiment rule files and the experiments declared (DECLARED,
# common.smk), read by input functions once every rule file is parsed.


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
    log:
        f"{LOGS}/tables/summary_{{dataset}}_html.log",
    conda:
        "../envs/ddppm.yaml"
    params:
        cfg=global_params("datasets"),
        code=code_of("summary_table_html.py", methods=METHODS),
    script:
        "../scripts/summary_table_html.py"


rule provenance_table:
    """Provenance of every table: config hash, git commit and versions, as CSV and HTML."""
    input:
        lambda wc: DECLARED.collect("provenance"),
    output:
        csv=f"{RESULTS}/report/provenance.csv",
        html=report(
            f"{RESULTS}/report/provenance.html",
            caption="../report/provenance.rst",
            category="Tables",
            subcategory="Provenance",
            labels={"table": "provenance"},
        ),
    log:
        f"{LOGS}/report/provenance.log",
    conda:
        "../envs/ddppm.yaml"
    params:
        cfg=global_params("datasets"),
        code=code_of("provenance_table.py", methods=[]),
    script:
        "../scripts/provenance_table.py"


rule report_landing:
    """The report's landing page (the verdict, under one screen) and the page of every finding in full."""
    input:
        summary=f"{RESULTS}/tables/summary.csv",
        provenance=f"{RESULTS}/report/provenance.csv",
        findings=lambda wc: DECLARED.collect("findings"),
        verdict=lambda wc: DECLARED.collect("verdict"),
    output:
        landing=f"{RESULTS}/report/landing.rst",
        findings=report(
            f"{RESULTS}/report/findings.html",
            caption="../report/findings.rst",
            category="Findings",
            labels={"page": "every finding"},
        ),
    log:
        f"{LOGS}/report/landing.log",
    conda:
        "../envs/ddppm.yaml"
    params:
        cfg=global_params("datasets", "threat_models", "montecarlo", "experiments", "verdict"),
        code=code_of("report_landing.py", methods=METHODS),
    script:
        "../scripts/report_landing.py"


rule rule_graph:
    """The workflow's rule graph as a figure of the report (off the landing page, which states the verdict)."""
    output:
        png=report(
            f"{RESULTS}/report/rule_graph.png",
            caption="../report/rule_graph.rst",
            category="Rule graph",
            labels={"figure": "rule graph"},
        ),
        pdf=f"{RESULTS}/report/rule_graph.pdf",
    log:
        f"{LOGS}/report/rule_graph.log",
    conda:
        "../envs/ddppm.yaml"
    params:
        snakefile=workflow.main_snakefile,
        # What shapes the graph: the rules, and the config keys that choose what the default target builds.
        rules=sorted(r.name for r in workflow.rules),
        cfg=global_params("experiments", "datasets", "montecarlo", "common", "methods"),
        code=code_of("rule_graph.py", methods=[]),
    script:
        "../scripts/rule_graph.py"


rule report_inputs:
    """Everything the HTML report shows (then: snakemake --report report.html)."""
    input:
        f"{RESULTS}/report/landing.rst",
        f"{RESULTS}/report/findings.html",
        f"{RESULTS}/report/provenance.html",
        f"{RESULTS}/report/rule_graph.png",
        expand(f"{RESULTS}/tables/summary_{{dataset}}.html", dataset=DATASETS),


localrules:
    rule_graph,
    summary_table_html,
    provenance_table,
    report_landing,
