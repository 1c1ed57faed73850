# Local-DP PCA (Wang & Xu, Theoretical Computer Science 2020): the synthetic Figs. 3 and 4. One job per panel
# (ldppca.<figure>.panels), one summary and one figure per figure, one table and findings file for the report.
from ddppm.experiments.ldppca import FIGURES as LDPPCA_FIGURES
from ddppm.experiments.ldppca import panel_config as ldppca_panel_config
from ddppm.experiments.ldppca import section_params as ldppca_section_params

# The section's cross-key checks (ddppm.experiments.ldppca.check_config) ran with the config's validation.
LDPPCA_EXPERIMENT = get_experiment("ldppca")
LDPPCA_USES = LDPPCA_EXPERIMENT.methods_used(config)  # the registry entries its jobs use (rule code)
LDPPCA = f"{RESULTS}/ldppca"
LDPPCA_PANELS = {fig: range(len(config["ldppca"][fig]["panels"])) for fig in LDPPCA_FIGURES}
LDPPCA_FIGURE_FILES = {
    fig: [f"{RESULTS}/figures/ldppca_{fig}.{ext}" for ext in ("png", "pdf")] for fig in LDPPCA_FIGURES
}


rule ldppca_panel:
    """Local-DP PCA: every run of one panel of one figure (all k/s rows, σ calibrations and methods)."""
    output:
        f"{LDPPCA}/{{ldppca_figure}}/runs~panel{{ldppca_panel}}.parquet",
    log:
        f"{LOGS}/ldppca/{{ldppca_figure}}/panel{{ldppca_panel}}.log",
    benchmark:
        f"{BENCH}/ldppca/{{ldppca_figure}}/panel{{ldppca_panel}}.tsv"
    wildcard_constraints:
        ldppca_figure="|".join(LDPPCA_FIGURES),
        ldppca_panel=r"[0-9]+",
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        cfg=lambda wc: ldppca_panel_config(config["ldppca"], wc.ldppca_figure, int(wc.ldppca_panel)),
        code=code_of("ldppca_panel.py", methods=LDPPCA_USES),
    script:
        "../../scripts/ldppca_panel.py"


rule ldppca_summary:
    """Local-DP PCA: a figure's points (mean error, band, chance level) and the fitted theory rates."""
    input:
        lambda wc: expand(
            f"{LDPPCA}/{{fig}}/runs~panel{{i}}.parquet", fig=wc.ldppca_figure, i=LDPPCA_PANELS[wc.ldppca_figure]
        ),
    output:
        summary=f"{LDPPCA}/{{ldppca_figure}}/summary.parquet",
        fits=f"{LDPPCA}/{{ldppca_figure}}/theory_fit.parquet",
    log:
        f"{LOGS}/ldppca/{{ldppca_figure}}/summary.log",
    wildcard_constraints:
        ldppca_figure="|".join(LDPPCA_FIGURES),
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        cfg=lambda wc: ldppca_section_params(config["ldppca"], ("spike", "fit", wc.ldppca_figure)),
        code=code_of("ldppca_summary.py", methods=LDPPCA_USES),
    script:
        "../../scripts/ldppca_summary.py"


rule ldppca_figure:
    """Local-DP PCA: one figure (error against n, p and ε per row of k/s, chance level, fitted rates)."""
    input:
        summary=f"{LDPPCA}/{{ldppca_figure}}/summary.parquet",
        fits=f"{LDPPCA}/{{ldppca_figure}}/theory_fit.parquet",
    output:
        png=report(
            f"{RESULTS}/figures/ldppca_{{ldppca_figure}}.png",
            caption="../../report/ldppca_figure.rst",
            category=LDPPCA_EXPERIMENT.title,
            labels={"figure": "{ldppca_figure}"},
        ),
        pdf=f"{RESULTS}/figures/ldppca_{{ldppca_figure}}.pdf",
    log:
        f"{LOGS}/ldppca/{{ldppca_figure}}/figure.log",
    wildcard_constraints:
        ldppca_figure="|".join(LDPPCA_FIGURES),
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        cfg=lambda wc: ldppca_section_params(config["ldppca"], ("delta", "sigma_modes", "methods", wc.ldppca_figure)),
        code=code_of("ldppca_figure.py", methods=LDPPCA_USES),
    script:
        "../../scripts/ldppca_figure.py"


rule ldppca_table:
    """Local-DP PCA: both figures' points as one table (Parquet, and CSV for the report) and the findings."""
    input:
        summaries=expand(f"{LDPPCA}/{{fig}}/summary.parquet", fig=LDPPCA_FIGURES),
        fits=expand(f"{LDPPCA}/{{fig}}/theory_fit.parquet", fig=LDPPCA_FIGURES),
    output:
        parquet=f"{LDPPCA}/summary.parquet",
        csv=f"{LDPPCA}/summary.csv",
        page=report(
            html_twin(f"{LDPPCA}/summary.csv"),
            caption="../../report/ldppca_table.rst",
            category=LDPPCA_EXPERIMENT.title,
            labels={"table": "summary"},
        ),
        fits=f"{LDPPCA}/theory_fit.csv",
        fits_page=report(
            html_twin(f"{LDPPCA}/theory_fit.csv"),
            caption="../../report/ldppca_theory_fit.rst",
            category=LDPPCA_EXPERIMENT.title,
            labels={"table": "theory fit"},
        ),
        findings=f"{LDPPCA}/findings.txt",
    log:
        f"{LOGS}/ldppca/table.log",
    conda:
        "../../envs/ddppm.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        cfg=global_params("ldppca.delta", "ldppca.sigma_modes"),
        code=code_of("ldppca_table.py", methods=LDPPCA_USES),
    script:
        "../../scripts/ldppca_table.py"


rule ldppca_fig3:
    """Wang & Xu Fig. 3: Algorithm 1 on the low-dimensional model, error against n, p and ε for each k."""
    input:
        LDPPCA_FIGURE_FILES["fig3"],


rule ldppca_fig4:
    """Wang & Xu Fig. 4: Algorithm 2 (and 1) on the sparse model, p = 400, error against n, p and ε for each s."""
    input:
        LDPPCA_FIGURE_FILES["fig4"],


rule ldppca:
    """Every output of the local-DP PCA experiment."""
    input:
        LDPPCA_EXPERIMENT.targets(RESULTS),


localrules:
    ldppca_summary,
    ldppca_figure,
    ldppca_table,
    ldppca_fig3,
    ldppca_fig4,
    ldppca,
