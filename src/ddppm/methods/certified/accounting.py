"""Privacy of the repaired D-DP-PM (docs/certified.md, section 2): certified δ, and the exact law of what an
observer sees, for checking it.

**Certified δ (the network view: every release of every agent).** Replace one row ``x`` of agent j by ``x′``.
Given the releases before round t (public), every agent's basis ``B_i^(t−1)`` is fixed; the releases of agents
``i ≠ j`` do not move, and agent j's moves by ``(xxᵀ − x′x′ᵀ) B_j^(t−1)``, of Frobenius norm at most Δ
(``power_step`` sensitivity: 1 for k = 1, √2 for k ≥ 2 under ``replace_one``). Round t is therefore a Gaussian
mechanism of sensitivity Δ and noise ``σ_t``, and the T rounds compose adaptively into one ``μ``-GDP mechanism,

    μ = Δ · sqrt(Σ_t 1/σ_t²),

exactly (Dong, Roth & Su 2022, Corollary 3.3); its δ at ε is the hockey stick of ``N(0,1)`` and ``N(μ,1)``
(:func:`ddppm.common_task.certified.certified_delta`), the same for both orders. The final bases are post-processing.
This is an upper bound for every neighbour, by proof.

**The exact law of the view**, to check it (:func:`view_log_density`): given the public start, the view
``(z^(1), …, z^(T))`` has density ``Π_t N(z^(t); G_j B_j^(t−1), σ_t² I)`` over agents, with ``B^(t−1)`` a function of
the earlier releases. :func:`monte_carlo_delta` estimates the hockey-stick δ of one neighbouring pair from it,
``δ = E_X[(1 − e^{ε − L})₊]`` with L the privacy loss: a searched δ at that pair (a lower bound on the sup).
"""

from __future__ import annotations

import numpy as np

from ddppm.common_task.certified import certified_delta
from ddppm.methods.certified.algorithm import CertifiedParams, Draws, certified_network, orthonormalise


def certified_mu(params: CertifiedParams, sensitivity: float) -> float:
    """``μ = Δ sqrt(Σ_t 1/σ_t²)``: the repaired algorithm's whole transcript is μ-GDP for every neighbour."""
    return float(sensitivity * np.sqrt(np.sum(1.0 / np.asarray(params.sigmas) ** 2)))


def certified_delta_of(params: CertifiedParams, sensitivity: float, eps: float) -> float:
    """Definition 1's δ at ε of the whole transcript, for every neighbour (module docs)."""
    return certified_delta(certified_mu(params, sensitivity), eps)


def view_log_density_terms(local_grams: np.ndarray, Wc: np.ndarray, params: CertifiedParams, start: np.ndarray,
                           releases: np.ndarray) -> np.ndarray:  # fmt: skip
    """Each round's log density (T × R; up to a constant that does not depend on the data) of each run's releases
    (T × m × R × d × k) under the data whose local Gram matrices are ``local_grams``, given the public start
    ``start`` (d × k × R, before orthonormalisation): round t's release is ``N(G_j B_j^(t−1), σ_t² I)`` given the
    earlier ones."""
    m = local_grams.shape[0]
    B = np.broadcast_to(orthonormalise(np.moveaxis(start, -1, 0)), (m, releases.shape[2], *start.shape[:2]))
    terms = np.zeros((params.T, releases.shape[2]))
    for t, sigma in enumerate(params.sigmas):
        mean = np.einsum("jde,jrek->jrdk", local_grams, B)
        terms[t] = -np.sum((releases[t] - mean) ** 2, axis=(0, 2, 3)) / (2 * sigma**2)
        B = orthonormalise(m * np.einsum("ij,jrdk->irdk", Wc, releases[t]))
    return terms


def view_log_density(local_grams: np.ndarray, Wc: np.ndarray, params: CertifiedParams, start: np.ndarray,
                     releases: np.ndarray) -> np.ndarray:  # fmt: skip
    """Log density (up to a constant that does not depend on the data) of each run's whole view: the sum of
    :func:`view_log_density_terms`."""
    return view_log_density_terms(local_grams, Wc, params, start, releases).sum(axis=0)


def monte_carlo_delta(grams: np.ndarray, grams_neighbour: np.ndarray, Wc: np.ndarray, params: CertifiedParams,
                      eps: float, draws: Draws) -> tuple[float, float]:  # fmt: skip
    """The hockey-stick δ of one ordered pair (``X`` with local Grams ``grams``, its neighbour with
    ``grams_neighbour``) at ε, by Monte Carlo over the runs of ``draws``: the estimate and its standard error."""
    run = certified_network(grams, Wc, params, draws)
    loss = view_log_density(grams, Wc, params, draws.B0, run.releases)
    loss -= view_log_density(grams_neighbour, Wc, params, draws.B0, run.releases)
    samples = np.clip(1.0 - np.exp(eps - loss), 0.0, None)
    return float(samples.mean()), float(samples.std(ddof=1) / np.sqrt(samples.size))
