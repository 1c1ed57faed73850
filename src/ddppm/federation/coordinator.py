"""The coordinator of a federated release: it drives the parties through the steps, sums what they send and
post-processes the sums, exactly as ``PrivatePCA`` post-processes its totals (docs/federation.md).

It never sees a row: only the parties' noisy releases, or under secure aggregation only their sums. The steps
mirror :func:`ddppm.common_task.preprocessing.private_statistics` and the method's estimate:

1. the private box's rounds (:func:`~ddppm.common_task.range_finding.shrink_intervals` on the summed counts);
2. the sums, whence the released mean and (scaling) the floored variances, projected onto what the bounds allow,
   as :func:`~ddppm.common_task.preprocessing.release_statistics` computes them;
3. the clipping radius when its search runs (:func:`~ddppm.common_task.clip_radius.choose_radius`);
4. the method's own protocol (:mod:`ddppm.federation.protocols`).

A transport is anything with ``parties`` (their count), ``secure`` (whether it sums by secure aggregation) and
``sum(step, public) → Σ_j reply_j`` (and ``each``: every reply, where each release is public): :class:`InProcess`
here, Flower's apps in :mod:`ddppm.federation.flower`.
Every message carries what has been released so far (the box, the statistics, the radius), so that a party can
be rebuilt for each step (:mod:`ddppm.federation.party`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ddppm.common_task.centring import recoloured_top_k
from ddppm.common_task.clip_radius import choose_radius
from ddppm.common_task.preprocessing import PrivateBox, Released, admissible_statistics
from ddppm.common_task.range_finding import shrink_intervals
from ddppm.core.errors import ConfigError
from ddppm.federation.agreement import Agreement
from ddppm.federation.plan import coordinate_bounds, full_box, radius_candidates, variance_floor
from ddppm.federation.protocols import protocol_of, released_message
from ddppm.federation.public import PublicRelease
from ddppm.release.certificate import Certificate
from ddppm.release.route import release_certificate


class PartyFailed(ConfigError):
    """A party refused a step or stopped answering: the coordinator releases nothing and names it."""

    def __init__(self, party: int | str, step: str, reason: str) -> None:
        who = f"party {party}" if isinstance(party, int) else party
        super().__init__(f"{who} failed at step {step!r} ({reason}); nothing is released. What the other parties "
                         "sent before is spent: their ledgers keep it")  # fmt: skip
        self.party, self.step, self.reason = party, step, reason


@dataclass(frozen=True)
class FederatedRelease:
    """What a federated release publishes, as ``PrivatePCA`` does: ``components`` (k × d), ``mean``, ``scale``
    (the records' units) and the certificate."""

    components: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    certificate: Certificate


class InProcess:
    """A transport that calls each :class:`~ddppm.federation.party.Party` in this process (tests, and the
    reference the Flower apps are compared with). ``secure``: pretend the sum is secure aggregation's."""

    def __init__(self, parties: list[Any], secure: bool = False) -> None:
        self.members, self.secure = parties, secure

    @property
    def parties(self) -> int:
        return len(self.members)

    def each(self, step: str, public: dict[str, Any]) -> list[np.ndarray]:
        """Every party's reply, in the parties' order (only where each release is public: trust ``local``)."""
        if self.secure:
            raise ConfigError(f"coordinator: step {step!r} needs each party's release, which secure aggregation hides")
        return self._replies(step, public)

    def _replies(self, step: str, public: dict[str, Any]) -> list[np.ndarray]:
        replies = []
        for index, party in enumerate(self.members):
            try:
                replies.append(party.answer(step, public))
            except Exception as error:  # a party's refusal or death: name it, release nothing
                raise PartyFailed(index, step, f"{type(error).__name__}: {error}") from error
        return replies

    def sum(self, step: str, public: dict[str, Any]) -> np.ndarray:
        replies = self._replies(step, public)
        total = replies[0]
        for reply in replies[1:]:  # in the parties' order, as the one-process fit sums them
            total = total + reply
        return total


def coordinate(transport: Any, agreement: Agreement, d: int) -> FederatedRelease:
    """Run one federated release of ``agreement`` on d features over ``transport`` (module docstring)."""
    public = PublicRelease(agreement, d)
    if transport.parties != public.parties:
        raise ConfigError(f"coordinator: {transport.parties} parties answered, the agreement has {public.parties}")
    protocol = protocol_of(public.method)
    if protocol.secure_sum_only and agreement.noise == "secure" and not transport.secure:
        raise ConfigError(f"coordinator: {public.method.name} releases each party's statistic with a share of the "
                          "noise only; it needs secure aggregation (Flower's SecAgg+), so that the coordinator sees "
                          "the sum alone")  # fmt: skip
    stamp = {"agreement": agreement.digest()}

    def ask(step: str, message: dict[str, Any]) -> np.ndarray:
        return transport.sum(step, {**stamp, **message})

    box, released = _preprocessing(ask, public)
    so_far = {"lower": None if box is None else box.lower, "upper": None if box is None else box.upper}
    asking = _Asking(ask, transport, stamp["agreement"])
    message = {**so_far, **released_message(released)}
    scales = public.recolour_scales(box, released)
    if scales is not None and protocol.second_moment:  # a centred release: the second moment recoloured
        V = recoloured_top_k(protocol.federated_second_moment(asking, public, message)[None], scales, public.k)[0]
    else:
        V = protocol.federated_estimate(asking, public, message)
    mean, scale = public.units(box, released)
    statistics = {} if released is None else released.projected
    own, row = public.calibration
    certificate = release_certificate(public.method, "named by the user", agreement.trust, agreement.noise,
                                      public.parties, agreement.n, d, public.k, float(agreement.epsilon),
                                      float(agreement.delta), public.bounds, row, own, public.noise,
                                      public.party_label, _observer(protocol, agreement))  # fmt: skip
    return FederatedRelease(np.ascontiguousarray(V.T), mean, scale, replace(certificate, statistics=statistics))


def _observer(protocol: Any, agreement: Agreement) -> str | None:
    """Whom the certificate covers, when not the method's trust model's default: the relaying coordinator (gossip),
    or the aggregator with up to c parties colluding with it (secure aggregation, the agreement's ``colluding``)."""
    observer = getattr(protocol, "federated_observer", None)
    c = int(agreement.colluding)
    if c and protocol.trust_model == "secure_aggregation":
        observer = (f"the aggregator, who sees the sums only, with up to {c} part{'y' if c == 1 else 'ies'} "
                    "colluding with it (each party adds its share of the noise for p − c parties), and the public")
    return observer


@dataclass(frozen=True)
class _Asking:
    """The transport as a protocol sees it: ``sum`` stamps every message with the agreement."""

    ask: Any
    transport: Any
    stamp: str

    def sum(self, step: str, message: dict[str, Any]) -> np.ndarray:
        return self.ask(step, message)

    def each(self, step: str, message: dict[str, Any]) -> list[np.ndarray]:
        return self.transport.each(step, {**message, "agreement": self.stamp})


def _preprocessing(ask: Any, public: PublicRelease) -> tuple[PrivateBox | None, Released | None]:
    """The private box, the released statistics and the radius, from the parties' summed releases."""
    noise, plan, n, d = public.noise, public.plan, public.agreement.n, public.d
    if noise is None:
        return None, None
    spread = np.sqrt(noise.parties)
    box, lower, upper = None, None, None
    if noise.range_rounds:
        lower, upper = full_box(d)
        for _ in range(noise.range_rounds):
            noisy = ask("box_counts", {"lower": lower, "upper": upper})
            lower, upper = shrink_intervals(noisy, lower, upper, n, spread * noise.sigma_range, plan.range)
        box = PrivateBox(lower, upper)
    sums = ask("sums", {"lower": lower, "upper": upper})
    mean_hat = sums[:d] / n
    variance_hat = sums[d:] / n - mean_hat**2 if plan.scale else None
    bound = coordinate_bounds(public, None if box is None else (box.lower, box.upper))
    released = admissible_statistics(mean_hat, variance_hat, bound, variance_floor(public) if plan.scale else 0.0)
    mean, variance = released.mean, released.variance
    if noise.radius_searched:
        radii = radius_candidates(public, mean, variance)
        radius = float(radii[0])
        if radii.size > 1:  # as private_radius: one radius is the answer unseen, nothing drawn
            noisy = ask("norm_counts", {"lower": lower, "upper": upper, "mean": mean, "variance": variance,
                                        "radii": radii})  # fmt: skip
            radius = choose_radius(noisy, radii, noise.target_clipped)
        released = replace(released, radius=radius)
    return box, released


__all__ = ["FederatedRelease", "InProcess", "PartyFailed", "coordinate", "released_message"]
