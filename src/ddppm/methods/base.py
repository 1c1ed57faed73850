"""The method contract and the registry: every private-PCA method has one shape.

A method is a subclass of :class:`Method` in a module (or package) ``ddppm.methods.<name>``, decorated
with :func:`register`. The workflow, the tables and the figures learn the list of methods from
:func:`available_methods`; nothing outside a method's own module names it. A method supplies

* ``name``, ``label`` and ``style`` (its legend entry and line style);
* ``config_schema``: the JSON schema of its own config section ``methods.<name>`` (defaults included);
* :meth:`Method.choose_params`: its parameters at each (ε, δ limit) on a problem (a closed form here, or a
  calibration with rules of its own in ``workflow/rules/methods/<name>.smk``, then ``calibrated = True``);
* :meth:`Method.run_errors`: per-run errors from one random generator per run;
* its parameter table rows: one row per (ε, threat model) with at least :data:`PARAM_COLUMNS`.

Adding a method is one module plus its config entry (and, for a calibrated method, one rule file).

**A cheap start.** Every Snakemake job is a fresh interpreter, and most jobs use one method, so the lookup of one
method is lazy: :func:`get_method` (and :func:`method_module`) imports only the entry whose source sets the class
attribute ``name = "<name>"`` (found by reading the package's source text, :func:`ddppm.core.registry.entries_naming`;
no index to keep up to date), checks that the method did register, and imports every entry otherwise.
:func:`available_methods` and the lists built on it (:func:`common_task_methods`, :func:`method_styles`,
:func:`calibrated_methods`) import every entry (``pkgutil``), and list the methods in the same order whatever was
imported before: entries in ``pkgutil`` order, each entry's methods in registration order.
``tests/methods/test_base_registry.py`` checks that every registered method is found by its name line, so write a
method's ``name`` as a literal class attribute (a name computed at run time works, but its jobs import every method).
The code hash (:mod:`ddppm.core.provenance`) still counts every entry for a job that reaches the registry without
naming the methods it uses (:data:`DISCOVERED_PACKAGE`).
"""

from __future__ import annotations

import importlib
import pkgutil
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from ddppm.core.errors import ConfigError
from ddppm.core.registry import entries_naming

if TYPE_CHECKING:
    from ddppm.core.problem import DistributedProblem

PARAM_COLUMNS = ("eps", "delta_limit", "threat_model", "accounting", "delta", "feasible")
"""Columns every parameter-table row has. ``delta`` is the δ the chosen parameters achieve (NaN where
no parameters met the limit), ``delta_limit`` the budget it was chosen for, ``threat_model`` and
``accounting`` name how ``delta`` was computed (``none`` for references without a privacy claim,
:data:`PROVEN_EVERY_OBSERVER` for a δ proven for every neighbour and observer)."""

NO_THREAT_MODEL = "none"

PROVEN_EVERY_OBSERVER = "network_proven"
"""The ``threat_model`` of a parameter row whose δ is proven (sensitivity plus composition) for every neighbour
with the ``network`` view, every message an observer can see: it then holds under every threat model of the run
(:attr:`RegisteredMethod.delta_holds_for_every_threat_model`), and ``summary.csv`` repeats the row under each."""

UNNAMED_THREAT_MODELS = (NO_THREAT_MODEL, PROVEN_EVERY_OBSERVER)
"""Threat-model values that tables and figures do not name after a method: no privacy claim, or a δ proven under
every threat model."""

TRUST_MODELS = ("central", "secure_aggregation", "gossip", "local", "none")
"""The values of :attr:`RegisteredMethod.trust_model`."""


DISTRIBUTED_PCA = "distributed_pca"
"""The journal paper's task: the top principal direction of row-partitioned data (:class:`DistributedProblem`)."""


class RegisteredMethod(ABC):
    """What every registered method has, whatever its task: a name, a legend entry and a task.

    Instances are cheap and stateless; the registry keeps one per name.
    """

    name: ClassVar[str]
    label: ClassVar[str]
    style: ClassVar[dict[str, Any]] = {}
    task: ClassVar[str]
    """The problem the method solves; each task has its own interface (a subclass of this class)."""
    role: ClassVar[str] = "private"
    """``private``: a method whose releases are (ε, δ)-DP with the δ its parameter table records;
    ``reference``: a yardstick that is not a deployable private method (no privacy, or handed private
    information such as the true singular vector). Reference rows of ``summary.csv`` carry no δ."""
    trust_model: ClassVar[str] = "central"
    """Who must be trusted for the recorded δ to hold (:data:`TRUST_MODELS`): ``central`` (a trusted curator sees
    the data, only the output is public), ``secure_aggregation`` (parties see only sums), ``gossip`` (no trusted
    party; every message on the network is seen), ``local`` (every party's message is public), ``none`` (a
    reference with no privacy claim)."""
    delta_holds_for_every_threat_model: ClassVar[bool] = False
    """True when the recorded δ is a mechanism's δ proven for every neighbour and every observer (e.g. the
    analytic Gaussian mechanism of sensitivity 1 on each agent's own data): ``summary.csv`` then repeats the
    method's rows under every threat model of the run."""

    def plot_style(self) -> dict[str, Any]:
        """Legend label and line style for the figures."""
        return {"label": self.label, **self.style}


class Method(RegisteredMethod):
    """One private (or reference) PCA method of the journal task (``distributed_pca``), as the workflow sees it.

    Subclasses set the class attributes and implement :meth:`choose_params` and :meth:`run_errors`.
    """

    task: ClassVar[str] = DISTRIBUTED_PCA
    config_schema: ClassVar[dict[str, Any]] = {"type": "object", "additionalProperties": False, "properties": {}}
    calibrated: ClassVar[bool] = False
    """True when the parameter table comes from the method's own rules (``workflow/rules/methods/``)."""
    depends_on_eps: ClassVar[bool] = True
    """False for references whose output does not depend on ε: the same seeds then serve every ε."""
    configured_by: ClassVar[str | None] = None
    """The experiment whose config section holds this method's options (``<experiment>.method_options``), for a
    method the journal figures do not run; its options are then not under the top-level ``methods``."""
    experiment_options: ClassVar[tuple[str, ...]] = ()
    """Keys of an experiment's section that are also this method's options (merged over them), e.g. the workshop
    D-DP-PM's ``budget``; an experiment passes them on without knowing the method."""

    @abstractmethod
    def choose_params(
        self, problem: DistributedProblem, eps: np.ndarray, delta_limits: np.ndarray, options: dict[str, Any]
    ) -> pd.DataFrame:
        """The method's parameters for each ε and its δ limit: a table with :data:`PARAM_COLUMNS` and the
        method's own parameter columns. ``options`` is the validated section ``methods.<name>``."""

    @abstractmethod
    def run_errors(
        self,
        problem: DistributedProblem,
        params: pd.Series,
        rngs: Sequence[np.random.Generator],
        options: dict[str, Any],
    ) -> np.ndarray:
        """Error ``sin(v, q)`` (paper eq. 37) of one run per generator in ``rngs``, with the parameters of
        one row of :meth:`choose_params`'s table. Only called for feasible rows."""

    def calibrate(
        self,
        problem: DistributedProblem,
        eps: np.ndarray,
        delta_limits: np.ndarray,
        options: dict[str, Any],
        threat_model: str,
        definitions: dict[str, dict[str, str]] | None = None,
    ) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
        """A calibrated method (:attr:`calibrated`) under one threat model: its parameter rows on ``eps`` and
        ``delta_limits``, every evaluated candidate, and the calibration's metadata. ``definitions`` are the
        config's ``threat_models`` (the built-in table by default)."""
        raise NotImplementedError(f"method {self.name!r} is not calibrated: use choose_params")

    def seed_labels(self, dataset: str, eps: float) -> tuple[object, ...]:
        """What a run's seed derives from (with the run index): never the chunk layout."""
        return (dataset, self.name, float(eps)) if self.depends_on_eps else (dataset, self.name)


DISCOVERED_PACKAGE = "ddppm.methods"
"""The package whose every module the registry imports (:mod:`ddppm.core.provenance` reads this constant: a job
that reaches the registry can reach every method, unless its rule names the methods it uses)."""

_REGISTRY: dict[str, RegisteredMethod] = {}
_DISCOVERED = False


def register(cls: type[RegisteredMethod]) -> type[RegisteredMethod]:
    """Class decorator: add a method to the registry under ``cls.name``."""
    name = cls.name
    if cls.trust_model not in TRUST_MODELS:
        raise ValueError(f"method {name!r}: trust_model {cls.trust_model!r} is not one of {TRUST_MODELS}")
    if name in _REGISTRY and type(_REGISTRY[name]) is not cls:
        raise ValueError(f"two methods are registered as {name!r}: {type(_REGISTRY[name])} and {cls}")
    _REGISTRY[name] = cls()
    return cls


@cache
def registry_entries() -> tuple[str, ...]:
    """Every entry of :data:`DISCOVERED_PACKAGE` in ``pkgutil`` order (sorted by name): what discovery imports."""
    package = importlib.import_module(DISCOVERED_PACKAGE)
    return tuple(f"{package.__name__}.{i.name}" for i in pkgutil.iter_modules(package.__path__) if i.name != "base")


def _entry_of(module: str) -> str:
    return ".".join(module.split(".")[: len(DISCOVERED_PACKAGE.split(".")) + 1])


def _discover() -> None:
    """Import every module and package under :mod:`ddppm.methods` once, so their methods register."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    for entry in registry_entries():
        importlib.import_module(entry)
    _DISCOVERED = True


def available_methods(task: str | None = DISTRIBUTED_PCA) -> dict[str, Any]:
    """Every registered method of ``task`` (all tasks for ``None``) by name: entries in ``pkgutil`` order, each
    entry's methods in registration order (the order of a fresh full discovery, whatever :func:`get_method` had
    imported before)."""
    _discover()
    position = {entry: k for k, entry in enumerate(registry_entries())}
    last = len(position)  # an entry added after the listing was cached: after the others, as it registered
    ordered = sorted(_REGISTRY.items(), key=lambda item: position.get(_entry_of(type(item[1]).__module__), last))
    return {name: m for name, m in ordered if task is None or m.task == task}


def common_task_methods() -> dict[str, Any]:
    """Every registered method that solves the common task (:class:`ddppm.common_task.base.CommonTaskMethod`), by name,
    in registration order."""
    from ddppm.common_task.base import CommonTaskMethod

    methods = available_methods(task=None).items()
    return {name: m for name, m in methods if isinstance(m, CommonTaskMethod) and m.runs_common_task}


def method_styles() -> dict[str, dict[str, Any]]:
    """Legend entry and line style of every registered method: a common-task method's :meth:`common_style`, any
    other method's own (e.g. D-DP-PM's, whose searched rows a method's rule file adds to the common task)."""
    styles = {name: m.plot_style() for name, m in available_methods(task=None).items() if hasattr(m, "plot_style")}
    styles.update({name: m.common_style() for name, m in common_task_methods().items()})
    return styles


def calibrated_methods(task: str | None = DISTRIBUTED_PCA) -> tuple[str, ...]:
    """Names of the registered methods of ``task`` whose parameters come from a calibration of their own
    (:attr:`Method.calibrated`), in registration order: experiments and rules ask this, never a list of names."""
    return tuple(name for name, m in available_methods(task).items() if getattr(m, "calibrated", False))


def get_method(name: str) -> Any:
    """The registered method ``name`` (any task), importing only the entry that defines it (every entry if its name
    line is not found); a :class:`ConfigError` naming ``montecarlo.methods`` if unknown."""
    if name not in _REGISTRY:
        for entry in entries_naming(DISCOVERED_PACKAGE, name):
            importlib.import_module(entry)
    if name not in _REGISTRY:
        methods = available_methods(task=None)
        if name not in methods:
            raise ConfigError(f"montecarlo.methods: unknown method {name!r}; known methods are {sorted(methods)}")
    return _REGISTRY[name]


def method_module(name: str) -> str:
    """The registry entry that holds method ``name``: the module or package directly under ``ddppm.methods`` that
    defines it (for code-change tracking, :func:`ddppm.core.provenance.code_files`'s ``uses``)."""
    return _entry_of(type(get_method(name)).__module__)


def param_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A parameter table with :data:`PARAM_COLUMNS` first; checks every row has them."""
    table = pd.DataFrame(rows)
    missing = [c for c in PARAM_COLUMNS if c not in table]
    if missing:
        raise ValueError(f"parameter table lacks columns {missing}")
    return table[list(PARAM_COLUMNS) + [c for c in table.columns if c not in PARAM_COLUMNS]]


def gaussian_mechanism_params(
    eps: np.ndarray,
    delta_limits: np.ndarray,
    sigma_of: Callable[[float, float], float],
    threat_model: str = PROVEN_EVERY_OBSERVER,
) -> pd.DataFrame:
    """Parameter table of a Gaussian mechanism of sensitivity 1 calibrated by ``sigma_of(ε, δ)``: its ``sigma``
    and the δ that σ really achieves at ε (the exact analytic-Gaussian δ, Balle & Wang 2018), ``feasible``
    where that is within the limit. ``threat_model``: :data:`PROVEN_EVERY_OBSERVER` (the δ is proven for every
    neighbour and observer), or :data:`NO_THREAT_MODEL` for a reference that makes no privacy claim."""
    from ddppm.privacy.mechanisms import analytic_gaussian_delta

    rows = []
    for e, limit in zip(eps, delta_limits, strict=True):
        sigma = sigma_of(float(e), float(limit))
        achieved = analytic_gaussian_delta(sigma, float(e))
        rows.append(
            {
                "eps": float(e),
                "delta_limit": float(limit),
                "threat_model": threat_model,
                "accounting": "gaussian_mechanism",
                "delta": achieved,
                "feasible": bool(achieved <= limit * (1 + 1e-9)),
                "sigma": sigma,
            }
        )
    return param_table(rows)
