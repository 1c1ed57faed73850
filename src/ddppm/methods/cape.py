r"""CAPE: correlated noise that sums to a pooled-equivalent Gaussian at the aggregator (common task only).

H. Imtiaz and A. D. Sarwate, "Distributed differentially private algorithms for matrix and tensor
factorization", IEEE J. Sel. Topics Signal Process. 12(6), 2018 (the correlation-assisted private estimation
protocol, CAPE). Each of the m agents releases its second moment with two noises,

.. math::

    \hat G_j = X_j^\top X_j + e_j + g_j, \qquad e_j = u_j - \tfrac1m \textstyle\sum_i u_i,\;
    u_i \sim \mathcal N(0, \sigma_z^2), \qquad g_j \sim \mathcal N(0, \sigma_z^2 / m),

entrywise on the upper triangle (the zero-sum ``e_j`` come from a protocol among the agents). So each release
alone carries noise of variance :math:`(1 - 1/m)\sigma_z^2 + \sigma_z^2/m = \sigma_z^2`, while the ``e_j`` cancel
in the aggregator's sum, whose noise :math:`\sum_j g_j` has variance :math:`\sigma_z^2` only: ``m`` times less than
the conventional method's sum at the same per-release noise (:mod:`ddppm.methods.conventional`).

**The aggregator's view (our accounting, not the paper's).** CAPE's paper calibrates :math:`\sigma_z` so that one
release is (ε, δ)-DP. But the aggregator sees all m releases, and their noise is correlated. Per entry, the m
noises have covariance :math:`C = \sigma_z^2[(1 + 1/m) I - \mathbf 1\mathbf 1^\top / m]`, and a neighbour changes
agent j's release only, by at most Δ (:func:`ddppm.common_task.adjacency.release_sensitivity`, ``upper_triangle``).
The whole view is then one Gaussian mechanism with

.. math::

    \mu^2 = \Delta^2 (C^{-1})_{jj} = \frac{\Delta^2}{\sigma_z^2}\,\frac{2m}{m + 1}

(invert :math:`C = \sigma_z^2(aI - b\mathbf 1\mathbf 1^\top)`, :math:`a = 1 + 1/m`, :math:`b = 1/m`, by
Sherman–Morrison: :math:`(C^{-1})_{jj} = (1/a + b/(a(a - bm)))/\sigma_z^2 = 2/(a\sigma_z^2)`, since
:math:`a - bm = 1/m`). It leaks more than one release (by :math:`\sqrt{2m/(m+1)}`, up to √2), so this module
calibrates :math:`\sigma_z` for the whole view: the ``certified`` δ holds for every neighbour against an aggregator
that sees every release. It does not hold if the aggregator learns an agent's noise share (collusion): the trust
model is ``secure_aggregation``, which CAPE's zero-sum protocol needs anyway.

**A release with secure noise** (``PrivatePCA(noise="secure")``, and a federation's parties) draws only what the
aggregator's sum needs: each agent's ``g_j ~ N(0, σ_z²/m)`` from the release's sampler, added to its ``X_jᵀX_j``.
The sum has CAPE's law exactly (the ``e_j`` cancel in it), and the certificate, which covers an aggregator who
sees every release, covers a function of them. The zero-sum shares matter only if someone sees one agent's
release, which secure aggregation forbids.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ddppm.common_task.adjacency import release_sensitivity
from ddppm.common_task.base import (
    COMMON_TASK,
    Calibrated,
    CommonTaskMethod,
    GaussianRelease,
    certified,
    top_k,
    upper_triangle,
)
from ddppm.common_task.certified import noise_multiplier
from ddppm.common_task.task import CommonTask
from ddppm.core.errors import PrivacyError
from ddppm.methods.base import RegisteredMethod, register
from ddppm.privacy.mechanisms import is_release_noise, symmetric_gaussian, symmetric_release


def view_leakage(m: int) -> float:
    r"""``sqrt(2m/(m+1))``: the GDP parameter of the aggregator's view of all m CAPE releases, per unit Δ/σ_z
    (module docstring; 1 for one agent, → √2 as m grows)."""
    if m < 1:
        raise PrivacyError(f"CAPE needs at least one agent, got m = {m}")
    return float(np.sqrt(2.0 * m / (m + 1)))


def cape_noise(d: int, m: int, sigma_z: float, rng: np.random.Generator) -> np.ndarray:
    """The m agents' noises ``e_j + g_j`` (shape ``(m, d, d)``, symmetric): zero-sum ``e_j = u_j − ū`` with
    ``u_j ~ N(0, σ_z²)`` and independent ``g_j ~ N(0, σ_z²/m)``, entrywise on the upper triangle."""
    u = np.stack([symmetric_gaussian(d, sigma_z, rng) for _ in range(m)])
    g = np.stack([symmetric_gaussian(d, sigma_z / np.sqrt(m), rng) for _ in range(m)])
    return u - u.mean(axis=0) + g


@register
class CAPE(RegisteredMethod, CommonTaskMethod):
    name = "cape"
    label = "CAPE (correlated noise, Imtiaz & Sarwate)"
    style: ClassVar[dict[str, Any]] = {"color": "#17becf", "marker": "h", "linestyle": "-."}
    task = COMMON_TASK
    trust_model = "secure_aggregation"
    secure_noise = True
    source = "Imtiaz & Sarwate 2018 (CAPE); σ for the aggregator's whole view is ours"

    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Calibrated:
        delta = release_sensitivity("upper_triangle", options["adjacency"])
        leakage = view_leakage(task.m)
        sigma_z = noise_multiplier(eps, delta_limit) * delta * leakage
        # The view is one Gaussian mechanism of sensitivity Δ at the effective noise σ_z / leakage.
        view = GaussianRelease(delta, sigma_z / leakage)
        return certified(eps, delta_limit, {"sigma": sigma_z, "sensitivity": delta}, [view])

    second_moment = True

    def common_estimate(
        self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator], options: dict[str, Any]
    ) -> np.ndarray:
        return top_k(self.common_second_moment(task, calibrated, rngs, options), task.k)

    def common_second_moment(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator],
                             options: dict[str, Any]) -> np.ndarray:  # fmt: skip
        """The sum of the agents' releases ``Σ_j (X_jᵀX_j + e_j + g_j)`` (the e_j cancel)."""
        sigma_z = float(calibrated.params["sigma"])
        local = np.stack([task.local_gram(j) for j in range(task.m)])
        if is_release_noise(rngs):  # the sum's law, each agent's g_j from the release's sampler (the e_j cancel)
            share = sigma_z / np.sqrt(task.m)
            return np.stack([sum(symmetric_release(G, share, rng) for G in local) for rng in rngs])
        releases = [local + cape_noise(task.d, task.m, sigma_z, rng) for rng in rngs]
        return np.stack([r.sum(axis=0) for r in releases])

    federated = True
    streams = True
    secure_sum_only = True

    def party_release(self, party: Any, step: str, public: dict[str, Any]) -> np.ndarray:
        """Party j's ``X_jᵀX_j + e_j + g_j`` (simulation: the one-process draw's j-th); with secure noise
        ``X_jᵀX_j + g_j``, ``g_j ~ N(0, σ_z²/m)`` from OpenDP: under secure aggregation only the sum is seen, in
        which the zero-sum ``e_j`` cancel (docs/federation.md)."""
        sigma_z = float(party.public.calibration[0].params["sigma"])
        m, gram = party.public.parties, party.gram()
        if party.agreement.noise == "simulation":
            return gram + cape_noise(party.public.d, m, sigma_z, party.method_noise())[party.index]
        return symmetric_release(gram, sigma_z / np.sqrt(party.public.noise_sharers), party.method_noise())

    def common_view(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """The aggregator's whole view: every agent's release (upper triangles), drawn as the estimate draws them."""
        sigma_z = float(calibrated.params["sigma"])
        local = np.stack([task.local_gram(j) for j in range(task.m)])
        return np.stack([np.concatenate([upper_triangle(r) for r in local + cape_noise(task.d, task.m, sigma_z, rng)])
                         for rng in rngs])  # fmt: skip

    def common_costs(self, task: CommonTask, calibrated: Calibrated) -> dict[str, Any]:
        # One round to build the zero-sum shares (each agent sends its u_j's upper triangle to a sum), one to release.
        return {"floats_per_agent": task.d * (task.d + 1), "rounds": 2, "memory": "d²"}
