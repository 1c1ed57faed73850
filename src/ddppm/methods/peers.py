"""The peers as users get them: IBM's diffprivlib 0.6.6 and OpenDP 0.16.0 PCA, through their own APIs, as installed.

Both implement Amin et al.'s mechanism (:mod:`ddppm.methods.amin`): private eigenvalues, and each eigenvector drawn
by rejection from an angular central Gaussian proposal. Both samplers divide by the proposal's density factor where
the envelope argument multiplies, so what they release follows ``∝ exp(−uᵀAu)(uᵀΩu)^{−d}``, not the Bingham law
``∝ exp(−uᵀAu)`` their pure-ε proof is about (docs/peers.md). Their rows are therefore labelled "sampler defect:
not the mechanism's law", and their privacy column is ``claimed``: each library claims pure ε (δ = 0) for one
replaced row of norm ≤ 1; that proof covers the Bingham law, not the law drawn, so nothing here proves it for what
is released, and no violation has been shown either (a search on the circle finds a loss of at most 0.88 ε,
benchmarks/bench_peer_leak.py). The ``amin`` rows are the same mechanism with the correct law.

They run in the peers' own environment (:mod:`ddppm.common_task.peers`), in their "data already centred" mode on the
common task's prepared rows, by rule ``common_peers`` (not by ``common_runs``: ``runs_common_task`` is False);
:meth:`PeerLibrary.common_estimate` runs them for one point outside the pipeline.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

from ddppm.common_task.base import COMMON_TASK, Calibrated, CommonTaskMethod, curator_costs
from ddppm.common_task.peers import PEER_PYTHON, peer_fits
from ddppm.common_task.task import CommonTask
from ddppm.methods.amin import PAPER_SCALE, AminCovariance, iterative_eigenvector_sampling
from ddppm.methods.base import RegisteredMethod, register

SAMPLER_DEFECT = "sampler defect: not the mechanism's law"


class PeerLibrary(RegisteredMethod, CommonTaskMethod):
    """A peer library's PCA on the common task (central trust: a curator holds every row and runs the library)."""

    task = COMMON_TASK
    trust_model = "central"
    privacy_column = "claimed"
    runs_common_task = False
    library: ClassVar[str]
    """The library's name (config ``common.peers.libraries``, :mod:`ddppm.common_task.peer_library`)."""
    correct_law_method: ClassVar[str] = AminCovariance.name
    """The registered method that is the same mechanism with the correct law (Amin et al., ``ddppm.methods.amin``)."""

    def eps_split(self, eps: float, k: int) -> dict[str, float]:
        """The library's own split of ε (replace-one) between the eigenvalues and each of the k eigenvectors (for
        k below the dimension, as the common task has it)."""
        raise NotImplementedError

    def correct_law_eps(self, eps: float, k: int) -> float:
        """The total ε at which ``amin`` (all of ε on the k directions, ε/k each, the same β = ε_i/4) draws each
        direction from the Bingham law with the library's own per-direction ε: the like-with-like comparison of
        the two laws."""
        return k * self.eps_split(eps, k)["eps_per_direction"]

    def correct_law(self, task: CommonTask, eps: float, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """The same k draws with the Bingham law (the mechanism the library's proof is about): Amin et al.'s
        iterative sampling at the library's own per-direction ε and scale β = ε_i/4, one estimate (d, k) per
        generator. The like-with-like comparison of the two laws: the same ε split, the same mechanism."""
        beta = self.eps_split(eps, task.k)["eps_per_direction"] / PAPER_SCALE
        betas = np.full(task.k, beta)
        return np.stack([iterative_eigenvector_sampling(task.gram, task.k, betas, rng) for rng in rngs])

    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Calibrated:
        # δ is NaN: the library claims 0, and no proof covers what its sampler releases (module docstring).
        params = {"claimed_eps": float(eps), **self.eps_split(float(eps), task.k)}
        return Calibrated(float(eps), float(delta_limit), params, (), float("nan"))

    def with_claimed_eps(self, calibrated: Calibrated, claimed_eps: float) -> Calibrated:
        """The calibration with the library's own replace-one ε, as it reports it (OpenDP's ``map(2)``)."""
        return replace(calibrated, params={**calibrated.params, "claimed_eps": float(claimed_eps)})

    def common_estimate(
        self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator], options: dict[str, Any]
    ) -> np.ndarray:
        """Every fit in the peers' environment, with no time budget (a fit can take minutes at large ε)."""

        seeds = [int(rng.integers(2**32)) for rng in rngs]
        point = {"library": self.library, "k": task.k, "eps": calibrated.eps, "seeds": seeds}
        (fitted,) = peer_fits(options.get("peer_python", PEER_PYTHON), task.X, [point], math.inf)
        return np.linalg.qr(fitted.V)[0]

    def common_costs(self, task: CommonTask, calibrated: Calibrated) -> dict[str, Any]:
        return curator_costs(task)


@register
class Diffprivlib(PeerLibrary):
    """IBM's ``diffprivlib.models.PCA(n_components=k, epsilon=ε, data_norm=1, centered=True)``."""

    name = "diffprivlib_pca"
    library = "diffprivlib"
    label = f"diffprivlib 0.6.6 PCA as installed ({SAMPLER_DEFECT})"
    style: ClassVar[dict[str, Any]] = {"color": "#8c564b", "marker": "P", "linestyle": ":"}
    source = "IBM diffprivlib 0.6.6, models.PCA (Amin et al. 2019), centered=True"

    def eps_split(self, eps: float, k: int) -> dict[str, float]:
        # diffprivlib.models.utils.covariance_eig: ε/(k + 1) to the eigenvalues and to each of the k < d vectors.
        share = eps / (k + 1)
        return {"eps_eigenvalues": share, "eps_per_direction": share}


@register
class OpenDP(PeerLibrary):
    """OpenDP's ``make_private_pca`` with the origin known (rows centred), ``unit_epsilon = ε`` (one changed
    record: ``map(2)`` is ε)."""

    name = "opendp_pca"
    library = "opendp"
    label = f"OpenDP 0.16.0 PCA as installed ({SAMPLER_DEFECT})"
    style: ClassVar[dict[str, Any]] = {"color": "#9c9ede", "marker": "X", "linestyle": ":"}
    source = "OpenDP 0.16.0, make_private_pca (Amin et al. 2019), origin known"

    def eps_split(self, eps: float, k: int) -> dict[str, float]:
        # Half to the eigenvalues, half shared by the min(k, d − 1) = k eigenvectors (_split_pca_epsilon_evenly).
        return {"eps_eigenvalues": eps / 2, "eps_per_direction": eps / 2 / k}


def peer_library_methods(libraries: list[str] | tuple[str, ...]) -> dict[str, PeerLibrary]:
    """The registered peer methods of ``libraries`` (config ``common.peers.libraries``), by method name, in the
    config's order."""
    from ddppm.methods import available_methods

    peers = [m for m in available_methods(task=None).values() if isinstance(m, PeerLibrary)]
    return {m.name: m for library in libraries for m in peers if m.library == library}


def peer_uses(libraries: list[str] | tuple[str, ...]) -> list[str]:
    """The registered methods a peers' job uses: the libraries' and the correct law's (for its rule's code hash)."""
    methods = peer_library_methods(libraries)
    return [*methods, *dict.fromkeys(m.correct_law_method for m in methods.values())]
