"""ddppm: differentially private PCA over many parties: D-DP-PM, its baselines and exact privacy accounting.

The main entry points, importable from the top level (loaded on first use, so ``import ddppm`` is cheap)::

    from ddppm import load_problem, DDPPMParams, NoiseSchedule, AccountantSettings, evaluate_delta
    problem = load_problem("diabetes")                       # 4 agents on the paper's ring, c = 20
    params = DDPPMParams(alpha=1.0, sigma_q=0.05, schedule=NoiseSchedule("constant", 0.2), T=2)
    result = evaluate_delta(problem, params, [1, 5], AccountantSettings(view="paper"))
    result.delta                                             # δ for each ε

Methods live in :mod:`ddppm.methods` (``available_methods()``, ``get_method(name)``). A release of your own records:
``ddppm.PrivatePCA(n_components, epsilon, delta, bounds).fit(X)`` (docs/release.md).
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ddppm")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"

_PUBLIC = {
    "load_problem": "ddppm.pipeline.load",
    "DistributedProblem": "ddppm.core.problem",
    "DDPPMParams": "ddppm.accounting.iteration",
    "NoiseSchedule": "ddppm.accounting.iteration",
    "AccountantSettings": "ddppm.accounting.accountant",
    "evaluate_delta": "ddppm.accounting.accountant",
    "calibrate": "ddppm.accounting.calibration",
    "gaussian_tail_delta": "ddppm.privacy",
    "renyi_divergence": "ddppm.privacy.gaussian",
    "available_methods": "ddppm.methods",
    "get_method": "ddppm.methods",
    "sin_error": "ddppm.core.metrics",
    "PrivatePCA": "ddppm.release.estimator",
    "PrivacyLedger": "ddppm.release.ledger",
}

__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str):
    if name in _PUBLIC:
        return getattr(import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'ddppm' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
