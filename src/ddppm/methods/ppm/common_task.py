"""The private power method family on the common task (:mod:`ddppm.common_task`): thin adapters over this package.

Under the common adjacency (replace one row of the unit ball) one power step ``XᵀX Q`` has sensitivity
``√min(p, 2)`` whatever Q is (:func:`ddppm.common_task.adjacency.release_sensitivity`), so the family's sensitivity
rules (their eq. 3 and eq. 8, written for their interaction adjacency) coincide: Nicolas et al.'s and Balcan et
al.'s centralised methods are the same algorithm here, and so are the local-DP ones (Balcan et al.
decentralised and FedPower, synchronous). One representative per noise model runs the task
(:attr:`runs_common_task`), which says so in the tables: ``central`` (a curator), ``secure_aggregation``
(Nicolas et al.'s Algorithm 2: only sums are seen) and ``local`` (every client's noisy product is public).
Each makes L releases; the observer of its trust model sees each with noise ``σΔ`` at the changed client (the
aggregate, the sum, or that client's own), so all three are ``√L/σ``-GDP and differ only in error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from ddppm.common_task.adjacency import release_sensitivity
from ddppm.common_task.base import (
    Calibrated,
    CommonTaskMethod,
    GaussianRelease,
    certified,
    curator_costs,
    upper_triangle,
)
from ddppm.common_task.certified import noise_multiplier
from ddppm.common_task.task import CommonTask
from ddppm.core.arrays import check_orthonormal
from ddppm.methods.ppm.algorithms import (
    DenseOperator,
    aggregate_noise_factor,
    analyze_gauss,
    apply_client,
    initial_blocks,
    noisy_release,
    private_power_method,
    top_eigenvectors,
)
from ddppm.methods.ppm.linalg import orthonormalize
from ddppm.privacy.mechanisms import gaussian_release, symmetric_gaussian, symmetric_release


def _streams(rngs: Sequence[np.random.Generator]) -> tuple[list[np.random.Generator], list[np.random.Generator]]:
    """One generator for the initial block and one for the noise, per run (independent children)."""
    children = [rng.spawn(2) for rng in rngs]
    return [c[0] for c in children], [c[1] for c in children]


class PowerMethodOnCommonTask(CommonTaskMethod):
    """A noisy power method of this family on the common task (mixed into :class:`~.methods.PowerMethod`)."""

    secure_noise: ClassVar[bool] = True

    noise_model: ClassVar[str]
    runs_common_task: ClassVar[bool] = False
    """True for the one method of its noise model that runs the common task (the others coincide with it there)."""
    source: ClassVar[str] = "Nicolas et al. 2024; Balcan et al. 2016"

    def common_style(self) -> dict[str, Any]:
        coincide = {
            "central": "curator (Nicolas et al. = Balcan et al. here)",
            "secure_aggregation": "secure aggregation (Nicolas et al., Alg. 2)",
            "local": "every client's noise public (Balcan et al. = FedPower here)",
        }
        return {**self.plot_style(), "label": f"noisy power method, {coincide[self.noise_model]}"}  # type: ignore

    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Calibrated:
        L, p = int(options["iterations"]), task.k
        delta = release_sensitivity("power_step", options["adjacency"], block=p)
        sigma = noise_multiplier(eps, delta_limit, L)
        release = GaussianRelease(sensitivity=delta, sigma=sigma * delta, count=L)
        return certified(eps, delta_limit, {"sigma": sigma, "iterations": L, "sensitivity": delta}, [release])

    def common_estimate(
        self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator], options: dict[str, Any]
    ) -> np.ndarray:
        operator = DenseOperator(task.gram, [task.local_gram(j) for j in range(task.m)])
        init, noise = _streams(rngs)
        X0 = initial_blocks(init, task.d, task.k)
        delta = float(calibrated.params["sensitivity"])
        trace = private_power_method(
            operator,
            X0,
            int(calibrated.params["iterations"]),
            float(calibrated.params["sigma"]),
            lambda X: np.full(X.shape[0], delta),
            noise,
            noise_model=self.noise_model,
        )
        return trace.basis

    federated: ClassVar[bool] = True
    streams: ClassVar[bool] = True

    def party_release(self, party: Any, step: str, public: dict[str, Any]) -> np.ndarray:
        """Client j's ``A_j X^{ℓ−1}`` plus its noise (Alg. 2, line 7): ``N(0, (Δσ)²/(s − c))`` under secure
        aggregation (c: the agreement's bound on parties colluding with the coordinator), ``N(0, (Δσ)²)`` under
        ``local``. With simulation noise party 0 draws the aggregate noise from the one-process noise stream, as
        :func:`noisy_release` does, and the others none."""
        own, _ = party.public.calibration
        scale = float(own.params["sensitivity"]) * float(own.params["sigma"])
        noise = party.noise_stream("power", lambda: party.method_noise().spawn(2)[1])  # _streams' noise child
        product = party.gram() @ public["X"]
        aggregate = aggregate_noise_factor(self.noise_model, party.public.parties)[1]
        per_client = aggregate_noise_factor(self.noise_model, party.public.noise_sharers)[0]  # p − c share the sum's
        if party.agreement.noise == "simulation":
            return gaussian_release(product, scale * aggregate, noise) if party.index == 0 else product
        return gaussian_release(product, scale * per_client, noise)

    def federated_noise(self, public: Any) -> float:
        own = public.calibration[0]
        per_client, aggregate = aggregate_noise_factor(self.noise_model, public.parties)
        return float(own.params["sensitivity"]) * float(own.params["sigma"]) * max(per_client, aggregate)

    federated_query: ClassVar[str | None] = "X"

    def federated_steps(self, public: Any) -> tuple[str, ...]:
        """``method:0`` … ``method:L−1``: one per power iteration."""
        return tuple(f"method:{ell}" for ell in range(int(public.calibration[0].params["iterations"])))

    def federated_start(self, public: Any) -> np.ndarray:
        """The public start ``X⁰`` (d × k) from the method stream's first child: the agreement's seed alone."""
        init = public.public_randomness().spawn(2)[0]
        return initial_blocks([init], public.d, public.k)[0]

    def check_federated_query(self, public: Any, index: int, round: int, block: Any) -> np.ndarray:
        """``X`` is d × k with orthonormal columns (the sensitivity Δ holds for any such block, chosen adaptively),
        and at round 0 the public start."""
        X = check_orthonormal(block, (public.d, public.k), "X")
        if round == 0 and not np.array_equal(X, self.federated_start(public)):
            raise ValueError("X at the first iteration must be the public start drawn from the agreement's seed")
        return X

    def federated_estimate(self, transport: Any, public: Any, message: dict[str, Any]) -> np.ndarray:
        """The coordinator's half: the public start (:meth:`federated_start`), then L rounds of
        ``Y = Σ_j (A_j X + G_j)`` and ``X = orthonormalize(Y)``."""
        X = self.federated_start(public)
        for step in self.federated_steps(public):
            X = orthonormalize(transport.sum(step, {**message, "X": X}))
        return X

    def common_view(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """The public start ``X⁰`` and every release the observer sees, flattened: the aggregate
        ``Y_ℓ = A X^{ℓ−1} + G_ℓ`` (the curator's, or the secure sum), drawn as :meth:`common_estimate` draws it;
        under ``local`` the changed client's (client 0's) own noisy product precedes each aggregate, every client's
        noise drawn one by one (``literal_clients``, equal in law to the estimate's aggregate draw)."""
        operator = DenseOperator(task.gram, [task.local_gram(j) for j in range(task.m)])
        init, noise = _streams(rngs)
        X = initial_blocks(init, task.d, task.k)
        scale = np.full(len(rngs), float(calibrated.params["sensitivity"]) * float(calibrated.params["sigma"]))
        parts = [X]
        for _ in range(int(calibrated.params["iterations"])):
            if self.noise_model == "local":
                Y = np.zeros_like(X)
                for client in range(operator.clients):
                    draws = np.stack([rng.standard_normal(X.shape[1:]) for rng in noise])
                    term = apply_client(operator, client, X) + scale[:, None, None] * draws
                    parts += [term] if client == 0 else []
                    Y += term
            else:
                Y = noisy_release(operator, X, scale, noise, noise_model=self.noise_model)
            parts.append(Y)
            X = orthonormalize(Y)
        return np.concatenate([part.reshape(len(rngs), -1) for part in parts], axis=1)

    def common_view_scores(self, first: CommonTask, second: CommonTask, calibrated: Calibrated,
                           views: np.ndarray) -> np.ndarray:  # fmt: skip
        """The log-likelihood ratio of the view and its L per-release terms. Given the earlier releases the
        block ``X^{ℓ−1}`` is fixed, so release ℓ is ``N(A X^{ℓ−1}, s² I)`` (s = Δσ: the aggregate's noise, or
        client 0's own under ``local``) and contributes ``(‖Y − A X‖² − ‖Y − A′X‖²)/(2s²)``; the other clients'
        releases have one law under both neighbours."""
        L, d, k = int(calibrated.params["iterations"]), first.d, first.k
        s = float(calibrated.params["sensitivity"]) * float(calibrated.params["sigma"])
        local = self.noise_model == "local"
        blocks = views.reshape(len(views), -1, d, k)
        means = [(task.local_gram(0) if local else task.gram) for task in (first, second)]
        X, terms = blocks[:, 0], []
        for ell in range(L):
            own = blocks[:, 1 + (2 * ell if local else ell)]
            aggregate = blocks[:, 2 + 2 * ell] if local else own
            distance = [np.sum((own - np.einsum("de,rek->rdk", A, X)) ** 2, axis=(1, 2)) for A in means]
            terms.append((distance[0] - distance[1]) / (2 * s**2))
            X = orthonormalize(aggregate)
        terms = np.column_stack(terms)
        return np.column_stack([terms.sum(axis=1), terms])

    def common_costs(self, task: CommonTask, calibrated: Calibrated) -> dict[str, Any]:
        L = int(calibrated.params["iterations"])
        if self.noise_model == "central":
            return curator_costs(task)
        return {"floats_per_agent": L * task.d * task.k, "rounds": L, "memory": "d² + d k"}


class AnalyzeGaussOnCommonTask(CommonTaskMethod):
    """AnalyzeGauss on the common task: a curator releases the upper triangle of ``XᵀX`` plus Gaussian noise
    (sensitivity √2 under ``replace_one``) and takes the top-k eigenvectors."""

    source: ClassVar[str] = "Dwork et al. 2014"
    secure_noise: ClassVar[bool] = True

    def common_calibrate(self, task: CommonTask, eps: float, delta_limit: float, options: dict[str, Any]) -> Calibrated:
        delta = release_sensitivity("upper_triangle", options["adjacency"])
        sigma = noise_multiplier(eps, delta_limit)
        return certified(
            eps, delta_limit, {"sigma": sigma, "sensitivity": delta}, [GaussianRelease(delta, sigma * delta)]
        )

    second_moment: ClassVar[bool] = True

    def common_estimate(
        self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator], options: dict[str, Any]
    ) -> np.ndarray:
        p = calibrated.params
        return analyze_gauss(task.gram, task.k, float(p["sigma"]), float(p["sensitivity"]), list(rngs))

    def common_second_moment(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator],
                             options: dict[str, Any]) -> np.ndarray:  # fmt: skip
        """``XᵀX + E`` per generator, E drawn as :func:`analyze_gauss` draws it."""
        scale = float(calibrated.params["sensitivity"]) * float(calibrated.params["sigma"])
        return np.stack([symmetric_release(task.gram, scale, rng) for rng in rngs])

    def common_view(self, task: CommonTask, calibrated: Calibrated, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """The curator's release: the upper triangle of ``XᵀX + E`` (:func:`analyze_gauss` draws E the same way)."""
        p = calibrated.params
        scale = float(p["sensitivity"]) * float(p["sigma"])
        return np.stack([upper_triangle(task.gram + symmetric_gaussian(task.d, scale, rng)) for rng in rngs])

    def common_costs(self, task: CommonTask, calibrated: Calibrated) -> dict[str, Any]:
        return curator_costs(task)

    federated: ClassVar[bool] = True
    streams: ClassVar[bool] = True

    def party_release(self, party: Any, step: str, public: dict[str, Any]) -> np.ndarray:
        """The curator's release ``XᵀX + E`` (one holder: :mod:`ddppm.release.stream`), E drawn as
        :func:`analyze_gauss` draws it from the method stream."""
        p = party.public.calibration[0].params
        return symmetric_release(party.gram(), float(p["sensitivity"]) * float(p["sigma"]), party.method_noise())

    def federated_estimate(self, transport: Any, public: Any, message: dict[str, Any]) -> np.ndarray:
        """The top k of the release, by :func:`analyze_gauss`'s own eigensolver."""
        return top_eigenvectors(transport.sum("method", message), public.k)
