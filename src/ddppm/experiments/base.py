"""The experiment contract and the registry: every source paper's experiment has one shape.

A new experiment ``<name>`` takes at most four files (docs/pipeline.md, "Add an experiment", has a complete one):

* a module (or package) ``ddppm.experiments.<name>`` with a subclass of :class:`Experiment` decorated with
  :func:`register_experiment`: its targets, provenance tables and findings file (which the workflow declares for
  it), and its steps, methods decorated with :func:`experiment_step`, each a job's whole work (data, runs, tables,
  findings, figures) returning what to write;
* its config schema ``<name>.schema.yaml`` beside the module: the config section ``<name>`` at the top level of
  ``config.yaml``, every default included;
* its rule file ``workflow/rules/experiments/<name>.smk``, included when ``experiments`` lists ``<name>``: one rule
  per step, each running the generic script ``workflow/scripts/experiment_step.py``, so it needs no script of its
  own; its figures and tables reach the report under the generic caption ``workflow/report/experiment.rst``;
* optionally its own page ``docs/<name>.md``, or a caption of its own under ``workflow/report/``.

The experiments written before the generic script (common, ldppca, ppm, studies, workshop) keep their own scripts
(``workflow/scripts/<name>_*.py``), captions, plotting modules and docs pages: 10 to 19 files each.

A job needs one experiment: :func:`get_experiment` imports only the entry whose source sets the class attribute
``name = "<name>"`` (:func:`ddppm.core.registry.entries_naming` reads the package's source text; no index to keep up
to date), checks that the experiment did register, and imports every entry otherwise; :func:`available_experiments`
imports them all. ``tests/experiments/test_base_registry.py`` checks that every registered experiment is found by its
name line (write ``name`` as a literal class attribute), and the code hash still counts every entry for a job that
reaches this registry without naming its experiments (:data:`DISCOVERED_PACKAGE`).

The config assembly (:mod:`ddppm.config`) asks this registry for the sections and their checks; the journal
pipeline (:mod:`ddppm.pipeline`) never imports an experiment.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar

from ddppm.core.errors import ConfigError
from ddppm.core.registry import entries_naming
from ddppm.core.schema import section_with_defaults
from ddppm.pipeline.method_options import section_schema


class Experiment:
    """One source paper's headline experiment, as the workflow and the report see it.

    Subclasses set :attr:`name`, :attr:`title`, :attr:`targets_relative` and :attr:`findings_relative`, and
    override :meth:`check_config` with the cross-key checks their schema cannot express.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    """The report's category for the experiment's figures and tables (the paper, short)."""
    targets_relative: ClassVar[tuple[str, ...]] = ()
    """The figures and tables of the default run, relative to the results directory."""
    findings_relative: ClassVar[str]
    """The findings file (a title line, then one sentence per line), relative to the results directory."""
    provenance_relative: ClassVar[tuple[str, ...]] = ()
    """The Parquet tables whose provenance the report lists, relative to the results directory."""
    in_default_run: ClassVar[bool] = True
    """False for an experiment built only by its own target (``all_<name>``), such as the scale studies."""
    reportable: ClassVar[bool] = False
    """For an experiment outside the default run: with ``in_report: true`` in its config section, the default run
    builds it too and the report shows its findings (so the report never shows a stale one; the cost is its own)."""
    report_targets_relative: ClassVar[tuple[str, ...]] = ()
    """The figures such an experiment adds to the default run and the report when asked."""

    @cached_property
    def schema(self) -> dict[str, Any]:
        """The section's JSON schema (``<name>.schema.yaml`` beside the experiment's module)."""
        return _schema_file(self.name)

    def check_config(self, section: dict[str, Any], config: dict[str, Any] | None = None) -> None:
        """Cross-key checks of the validated section (raise :class:`ConfigError` naming ``<name>.<key>``);
        ``config`` is the whole validated config when there is one (its ``threat_models``, say)."""

    def notes(self, section: dict[str, Any], config: dict[str, Any]) -> list[str]:
        """What the validated config leaves out without an error (a setting with no data set to run on, say): one
        sentence each, printed once before any job."""
        return []

    def default_section(self, **overrides: Any) -> dict[str, Any]:
        """The section with every default of the schema, nested ``overrides`` merged in, validated and checked:
        the library's way to run the experiment without Snakemake."""
        section = section_with_defaults(self.schema, self.name, overrides)
        self.check_config(section)
        return section

    def methods_used(self, config: dict[str, Any]) -> list[str] | None:
        """The registered methods this experiment's jobs run or draw under the validated ``config``, so that
        editing any other method reruns none of them; ``None`` (the default) for every registered method."""
        return None

    def targets(self, results: str) -> list[str]:
        """The files the default run builds for this experiment (its rule file makes each of them)."""
        return [f"{results}/{path}" for path in self.targets_relative]

    def findings_path(self, results: str) -> str:
        """The findings file the report's landing page reads."""
        return f"{results}/{self.findings_relative}"

    def provenance(self, results: str) -> list[str]:
        """The Parquet tables whose provenance the report's table lists."""
        return [f"{results}/{path}" for path in self.provenance_relative]

    def declared(self, results: str, config: dict[str, Any] | None = None) -> dict[str, list[str]]:
        """What the experiment adds to the default target and the report (``ddppm.pipeline.declared``: the
        workflow declares it under ``experiment <name>``, so the rule file does not restate it); nothing for an
        experiment outside the default run unless the validated ``config`` asks for it (:attr:`reportable`)."""
        if not self.in_default_run:
            asked = self.reportable and config is not None and bool(config.get(self.name, {}).get("in_report"))
            if not asked:
                return {}
            targets = [f"{results}/{path}" for path in self.report_targets_relative]
            findings = [self.findings_path(results)]
            return {"targets": targets, "findings": findings, "provenance": self.provenance(results)}
        return {
            "targets": self.targets(results),
            "provenance": self.provenance(results),
            "findings": [self.findings_path(results)],
        }

    def step(self, name: str) -> Callable[[Any], Mapping[str, Any] | None]:
        """The step ``name``: a method decorated with :func:`experiment_step`, called by the generic script with
        the Snakemake job (its ``input``, ``output``, ``params``, ``wildcards``; anything with those attributes
        outside Snakemake), returning what to write by output name (``None`` if it wrote its outputs itself)."""
        function = getattr(type(self), name, None)
        if not getattr(function, STEP_MARK, False):
            steps = sorted(attr for attr in dir(type(self)) if getattr(getattr(type(self), attr), STEP_MARK, False))
            raise ValueError(f"experiment {self.name!r} has no step {name!r}; its steps are {steps}")
        return getattr(self, name)


STEP_MARK = "is_experiment_step"


def experiment_step(function: Callable[..., Any]) -> Callable[..., Any]:
    """Method decorator: make it a step the generic script may run (``Experiment.step``), and nothing else:
    a helper method is never run by a rule by mistake."""
    setattr(function, STEP_MARK, True)
    return function


DISCOVERED_PACKAGE = "ddppm.experiments"
"""The package whose every module :func:`available_experiments` imports (read by :mod:`ddppm.core.provenance`)."""

_REGISTRY: dict[str, Experiment] = {}
_HERE = Path(__file__).parent


def register_experiment(cls: type[Experiment]) -> type[Experiment]:
    """Class decorator: add an experiment to the registry under ``cls.name`` (its schema file must exist)."""
    if not (_HERE / f"{cls.name}.schema.yaml").exists():
        raise ValueError(f"experiment {cls.name!r} has no schema file {cls.name}.schema.yaml beside its module")
    if cls.name in _REGISTRY and type(_REGISTRY[cls.name]) is not cls:
        raise ValueError(f"two experiments are registered as {cls.name!r}")
    _REGISTRY[cls.name] = cls()
    return cls


def _schema_file(name: str) -> dict[str, Any]:
    return section_schema(name)


def available_experiments() -> dict[str, Experiment]:
    """Every registered experiment by name (sorted): each module of this package that registers one."""
    package = importlib.import_module(DISCOVERED_PACKAGE)
    for info in pkgutil.iter_modules(package.__path__):
        if info.name != "base":
            importlib.import_module(f"{package.__name__}.{info.name}")
    return {name: _REGISTRY[name] for name in sorted(_REGISTRY)}


def get_experiment(name: str) -> Experiment:
    """The registered experiment ``name``, importing only the entry that defines it (every entry if its name line is
    not found); a :class:`ConfigError` naming ``experiments`` if unknown."""
    if name not in _REGISTRY:
        for entry in entries_naming(DISCOVERED_PACKAGE, name):
            importlib.import_module(entry)
    if name not in _REGISTRY:
        known = available_experiments()
        if name not in known:
            raise ConfigError(f"experiments: unknown experiment {name!r}; known experiments are {sorted(known)}")
    return _REGISTRY[name]
