import copy

from snakemake.utils import validate

from ddppm.pipeline import check_config, dataset_config, eps_label


# Per-dataset overrides are validated like the global sections, but schema defaults must not be injected
# into them: an injected default would silently override the global value for that dataset.
_overrides = copy.deepcopy(config.get("dataset_options", {}))
validate(config, schema="../schemas/config.schema.yaml", set_default=True)
config["dataset_options"] = _overrides
check_config(config)

RESULTS = config["results_dir"]
DATASETS = list(config["datasets"])
EPS_LABELS = [eps_label(e) for e in config["epsilons"]]
METHODS = list(config["montecarlo"]["methods"])
LOGS = f"{RESULTS}/logs"
BENCH = f"{RESULTS}/benchmarks"


wildcard_constraints:
    dataset="|".join(DATASETS),
    method="ddppm|ldp_analytic|ldp|dpm",
    eps=r"[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?",
    chunk=r"[0-9]+",


def ds_params(*sections):
    """Exactly the configuration sections a rule reads, for this dataset (params change detection)."""
    return lambda wildcards: dataset_config(config, wildcards.dataset, sections)


def calibration_chunks(dataset):
    return int(dataset_config(config, dataset)["calibration"].get("chunks", 1))


def mc_chunks(dataset):
    return int(dataset_config(config, dataset)["montecarlo"]["chunks"])


def figure_targets():
    out = [f"{RESULTS}/figures/fig2_{ds}.{ext}" for ds in DATASETS for ext in ("png", "pdf")]
    out += [f"{RESULTS}/figures/fig2.{ext}" for ext in ("png", "pdf")]
    out += [f"{RESULTS}/figures/fig3.{ext}" for ext in ("png", "pdf")]
    return out


def all_targets():
    return figure_targets() + [f"{RESULTS}/tables/summary.csv"]


def summary_inputs(wildcards=None):
    return {
        "errors": expand(f"{RESULTS}/tables/errors_{{dataset}}.parquet", dataset=DATASETS),
        "calibration": expand(f"{RESULTS}/calibration/{{dataset}}.parquet", dataset=DATASETS),
    }


def run_config_hash(wildcards=None):
    from ddppm.io import config_hash

    return config_hash(config)


# Cheap gather/plot steps run in the main Snakemake process, not as cluster jobs.
localrules:
    all,
    fig2,
    fig3,
    tables,
    montecarlo,
    summarize_runs,
    figure_fig2_panel,
    figure_fig2,
    figure_fig3,
    summary_table,
