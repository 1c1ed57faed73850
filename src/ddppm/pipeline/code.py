"""The code a job runs, as one hash for its rule's ``params`` (:mod:`ddppm.core.provenance` does the hashing).

A job's code is its scripts, every ``ddppm`` module they import, and the registry entries it uses: the module or
package of each method it runs or draws (``methods``) and of each experiment it reaches only through the
experiment registry (``experiments``). Naming them keeps an edit to one method from rerunning every job that
merely reaches the registry; ``methods=None`` counts every registered method (the safe default).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ddppm.core.provenance import code_version, freeze_uses
from ddppm.experiments.base import DISCOVERED_PACKAGE as EXPERIMENTS_PACKAGE
from ddppm.experiments.base import get_experiment
from ddppm.methods.base import DISCOVERED_PACKAGE as METHODS_PACKAGE
from ddppm.methods.base import method_module


def experiment_module(name: str) -> str:
    """The registry entry (module or package under ``ddppm.experiments``) of experiment ``name``."""
    module = type(get_experiment(name)).__module__
    return ".".join(module.split(".")[: len(EXPERIMENTS_PACKAGE.split(".")) + 1])


def job_code_version(
    scripts: Iterable[str | Path], methods: Iterable[str] | None = None, experiments: Iterable[str] | None = ()
) -> str:
    """Hash of ``scripts``, of every ``ddppm`` module they import and of the registry entries of ``methods`` and
    ``experiments`` (``None``: every entry of that registry)."""
    uses: dict[str, set[str]] = {}
    if methods is not None:
        uses[METHODS_PACKAGE] = {method_module(name) for name in methods}
    if experiments is not None:
        uses[EXPERIMENTS_PACKAGE] = {experiment_module(name) for name in experiments}
    return code_version(*(str(s) for s in scripts), uses=freeze_uses(uses))
