import sys
from pathlib import Path

from ddppm.methods import common_task_methods
from ddppm.common_task.peers import PEERS_LOCK, check_peer_python, peer_minutes
from ddppm.common_task.settings import common_settings, setting_config_keys
from ddppm.core.errors import ConfigError
from ddppm.config import config_notes, validate_config
from ddppm.experiments import get_experiment
from ddppm.experiments.common import raw_records_params, searched_datasets
from ddppm.methods import available_methods, calibrated_methods, get_method
from ddppm.methods.peers import peer_uses
from ddppm.pipeline.code import job_code_version
from ddppm.pipeline.config import dataset_config, dataset_files, job_params, known_datasets
from ddppm.pipeline.config import other_results_hint
from ddppm.pipeline.declared import Declared

# The repository's root, from this file's own place (workflow/rules/common.smk), whichever Snakefile runs it: the
# root `Snakefile` or the catalog's `workflow/Snakefile`, which includes it (`workflow.basedir` is the folder of
# the Snakefile snakemake was given, so it differs between the two).
REPOSITORY = Path(workflow.current_basedir.get_path_or_uri(secret_free=True)).parents[1]
# A module fetched from a hosting service (`snakefile: github(...)`, what snakedeploy writes when it deploys from a
# URL) has no such folder: the rule files, scripts and code hashes below need the files on disk, and the `ddppm`
# package the jobs import must be installed from the same checkout. Say so, rather than fail later on a missing file.
if not Path(REPOSITORY, "workflow", "rules", "common.smk").is_file():
    raise SystemExit(
        f"ddppm runs only from a local checkout, not from {workflow.current_basedir.get_path_or_uri(secret_free=True)}:"
        " clone the repository, install it (requirements/install.sh) and name its workflow/Snakefile by path in"
        " your module statement (docs/pipeline.md, 'Use ddppm from your workflow')"
    )


def check_calibrated_rule_files():
    """A calibrated method runs in the journal figures only through its own rule file (its calibration jobs)."""
    for method in sorted(set(config["montecarlo"]["methods"])):
        if (
            get_method(method).calibrated
            and not Path(REPOSITORY, "workflow", "rules", "methods", f"{method}.smk").exists()
        ):
            experiment = get_method(method).configured_by
            raise ConfigError(
                f"montecarlo.methods: {method!r} is calibrated but has no rule file workflow/rules/methods/{method}.smk, "
                "so the journal figures cannot run it; remove it from montecarlo.methods"
                + (f" (it has its own experiment: add `{experiment}` to `experiments`)" if experiment else "")
            )


# Validates against src/ddppm/pipeline/config.schema.yaml (completed with every registered method's own
# schema and every experiment's section), fills in every default, and runs the cross-key checks (the
# experiments' own included): a bad config stops here, before any job.
try:
    validate_config(config)
    check_calibrated_rule_files()
except ConfigError as error:  # the message names the key and the fix; a traceback would only bury it
    raise SystemExit(f"Config error (nothing ran): {error}") from None
for note in config_notes(config):  # what the config leaves out without an error, said once
    print(f"Note: {note}", file=sys.stderr)

RESULTS = config["results_dir"]
DATASETS = list(config["datasets"])
METHODS = list(config["montecarlo"]["methods"])
CLOSED_FORM_METHODS = [m for m in METHODS if not get_method(m).calibrated]
LOGS = f"{RESULTS}/logs"
BENCH = f"{RESULTS}/benchmarks"
SCRIPTS = f"{REPOSITORY}/workflow/scripts"
# The calibrated methods' rule files this run includes (workflow/rules/methods/<name>.smk of a listed method).
METHOD_RULE_FILES = [
    path.stem for path in sorted(Path(REPOSITORY, "workflow", "rules", "methods").glob("*.smk")) if path.stem in METHODS
]
# What the rule files and the experiments add to the default target, the report, Fig. 2's floors, the common task's
# summary and the frontier figure (ddppm.pipeline.declared): each owner declares once, consumers read lazily (input
# functions, rule all) in this owners' order, so the order of the includes does not matter.
DECLARED = Declared(
    [
        "journal",
        *(f"methods/{name}.smk" for name in METHOD_RULE_FILES),
        *(owner for name in config["experiments"] for owner in (f"experiment {name}", f"experiments/{name}.smk")),
    ]
)
# The report's landing page, written by rule report_landing from this run's tables (workflow/rules/report.smk).
REPORT_LANDING = f"{RESULTS}/report/landing.rst"


wildcard_constraints:
    # the journal's `datasets`, those only an experiment uses, and the user's files (dataset_options, source: file)
    dataset="|".join(known_datasets(config)),
    method="|".join(available_methods()),
    eps=r"[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?",
    chunk=r"[0-9]+",
    chunks=r"[0-9]+",


def params_of(*keys, drop=()):
    """Exactly the config keys a job reads (dotted, `{method}` filled from the wildcard), for its dataset,
    less `drop` (settings that only change the job layout, never a result)."""
    return lambda wc: job_params(config, wc.dataset, tuple(k.format(**wc) for k in keys), tuple(drop))


def global_params(*keys):
    """The top-level config keys a gathering job reads (e.g. which datasets it gathers)."""
    return lambda wc: job_params(config, None, keys)


def code_of(*scripts, methods=None, experiments=()):
    """Hash of the scripts' code, of every ddppm module they import, and of the registry entries the job uses
    (ddppm.pipeline.code): ``methods``, the methods it runs or draws (a list, ``"wildcard"`` for the ``{method}``
    wildcard, a function of the wildcards, or None for every registered method: the safe default), and
    ``experiments``, those it reaches only through the experiment registry (a job imports its own)."""
    paths = [f"{SCRIPTS}/{s}" for s in scripts]

    def version(wc):
        names = [wc.method] if methods == "wildcard" else methods(wc) if callable(methods) else methods
        return job_code_version(paths, names, experiments)

    return version


def step_params(step, *keys, methods=(), **extra):
    """The params of a job that runs an experiment's step with the generic script workflow/scripts/experiment_step.py
    (a regex of the linter takes the word before a colon for a rule: no colons here): ``step`` as
    ``<experiment>.<step>``, the config keys it reads (top-level, dotted; the job's config hash), and its code, that
    is the generic script, the experiment's module with what it imports, and ``methods``, the registered methods it
    runs (none by default; a function of the wildcards for a job per method). ``extra`` are further params, e.g. ``caption``, the text of the generic report caption
    workflow/report/experiment.rst (a param: editing it reruns the job)."""
    experiment = step.split(".")[0]
    return {
        "step": step,
        "cfg": global_params(*keys),
        "code": code_of(
            "experiment_step.py", methods=methods if callable(methods) else list(methods), experiments=[experiment]
        ),
        **extra,
    }


def problem_files(wildcards=None):
    """A data set's prepared rows, partition and network: patterns in ``{dataset}``, or, given a job's
    ``wildcards`` (an input function), that job's files."""
    files = {
        "data": f"{RESULTS}/data/{{dataset}}/normalized.parquet",
        "partition": f"{RESULTS}/data/{{dataset}}/partition.parquet",
        "network": f"{RESULTS}/data/{{dataset}}/network.parquet",
    }
    return files if wildcards is None else {key: path.format(dataset=wildcards.dataset) for key, path in files.items()}


def local_file(wildcards):
    """The user's file the data set is read from (`dataset_options.<name>.source: file`; none otherwise): an input
    of each job that reads it, so editing the file reruns exactly those jobs and what depends on them."""
    return dataset_files(config, [wildcards.dataset])


def mc_chunks(dataset):
    return int(dataset_config(config, dataset)["montecarlo"]["chunks"])


def montecarlo_inputs(wildcards):
    """What the montecarlo jobs read: the problem and the parameter table, and the shards when there are several."""
    chunks = mc_chunks(wildcards.dataset)
    shards = f"{RESULTS}/runs/{wildcards.dataset}/{wildcards.method}/chunk~{{chunk}}-of-{chunks}.parquet"
    return {
        **problem_files(wildcards),
        "params": f"{RESULTS}/params/{wildcards.dataset}/{wildcards.method}.parquet",
        "shards": expand(shards, chunk=range(chunks)) if chunks > 1 else [],
    }


def calibration_inputs(wildcards, chunks, folder):
    """What a calibrated method's calibration job reads: the problem, and, when its coarse grid is sharded
    (``chunks`` > 1), the shared neighbour search (``folder``/prepared.pickle) and the coarse shards; unsharded,
    the one job runs every step itself."""
    inputs = problem_files(wildcards)
    if chunks > 1:
        inputs["prepared"] = f"{folder}/prepared.pickle"
        inputs["coarse"] = expand(f"{folder}/coarse~{{chunk}}-of-{chunks}.parquet", chunk=range(chunks))
    return inputs


def summary_inputs(wildcards=None):
    return {"errors": expand(f"{RESULTS}/tables/errors_{{dataset}}.parquet", dataset=DATASETS)}


def figure_targets():
    out = [f"{RESULTS}/figures/fig2_{ds}.{ext}" for ds in DATASETS for ext in ("png", "pdf")]
    out += [f"{RESULTS}/figures/fig2.{ext}" for ext in ("png", "pdf")]
    return out


def html_twin(csv_path):
    """The HTML page that shows a CSV table in the report, written by the rule that writes the CSV (the view of a
    CSV entry in the report would only download it)."""
    return csv_path[: -len(".csv")] + ".table.html"


def all_targets(wildcards=None):
    """The default target: what every owner declared (read when rule all is evaluated), the summary, the report."""
    report_files = [REPORT_LANDING, f"{RESULTS}/report/provenance.html", f"{RESULTS}/report/findings.html"]
    report_files.append(f"{RESULTS}/report/rule_graph.png")
    report_files += [f"{RESULTS}/tables/summary_{ds}.html" for ds in DATASETS]
    return DECLARED.collect("targets") + [f"{RESULTS}/tables/summary.csv"] + report_files


# The journal's own contributions, and each listed experiment's as its registry entry states them
# (ddppm.experiments.Experiment.declared): its rule file adds only what the entry cannot know.
DECLARED.declare(
    "journal",
    targets=figure_targets(),
    provenance=[f"{RESULTS}/tables/errors_{ds}.parquet" for ds in DATASETS]
    + [f"{RESULTS}/params/{ds}/{m}.parquet" for ds in DATASETS for m in METHODS],
)
for name in config["experiments"]:
    DECLARED.declare(f"experiment {name}", **get_experiment(name).declared(RESULTS, config))
