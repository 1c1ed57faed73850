"""Everything of a federated release that follows from its public agreement alone, computed alike by the
coordinator and by every party: the bounds, the method, the preprocessing's plan and noises, the method's
calibration, the generators of the one-process fit (simulation noise) and the released units.

It mirrors :func:`ddppm.release.route.draw_release` step for step, so that a federated release is the one
``PrivatePCA.fit(X, parties=...)`` makes: the same budget split, the same noise scales, the same calibration. The
calibration sees the rows' shape only (a read-only view of zeros: n × d, no memory); that no calibration reads
the rows' values is tested (``tests/federation/test_public.py``).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from ddppm.common_task.budget import split_budget
from ddppm.common_task.centring import recolours, record_scales, released_units
from ddppm.common_task.preprocessing import PreprocessingPlan, PrivateBox, preprocessing_noise, preprocessing_party
from ddppm.common_task.raw_records import STREAM, calibrate_end_to_end
from ddppm.common_task.run import TRUST_ORDER
from ddppm.common_task.task import CommonTask
from ddppm.core.errors import ConfigError
from ddppm.core.network import parties_mixing_matrix
from ddppm.core.seeds import run_generators
from ddppm.federation.agreement import Agreement
from ddppm.methods import common_task_methods
from ddppm.release.noise import SecureNoise
from ddppm.release.route import SECURE_MARGIN, method_options


class PublicRelease:
    """The public side of one federated release of ``agreement`` on d features (module docstring)."""

    def __init__(self, agreement: Agreement, d: int) -> None:
        self.agreement, self.d = agreement, int(d)
        self.bounds, self.k = agreement.checked(self.d)
        methods = common_task_methods()
        if agreement.method not in methods:
            raise ConfigError(f"agreement: method {agreement.method!r} is not a method of the common task")
        self.method = methods[agreement.method]
        if TRUST_ORDER.get(self.method.trust_model, -1) < TRUST_ORDER[agreement.trust]:
            raise ConfigError(f"agreement: method {agreement.method} needs trust {self.method.trust_model!r}, more "
                              f"than trust {agreement.trust!r} grants")  # fmt: skip
        self.options = method_options(agreement.method_options)
        self.normalization = "scale" if agreement.standardize is False else "standardize"
        self.party_label = preprocessing_party(self.method) if agreement.standardize is not False else "none"
        self.recolours = recolours(self.method, agreement.standardize, self.bounds)
        self.plan = PreprocessingPlan(scale=agreement.standardize is True or self.recolours)
        self.widths = (self.bounds.upper - self.bounds.lower) / 2
        self.limit = agreement.delta * (1 - SECURE_MARGIN) if agreement.noise == "secure" else agreement.delta

    @property
    def parties(self) -> int:
        return len(self.agreement.sizes)

    @property
    def noise_sharers(self) -> int:
        """How many parties' shares make up a noise that only a sum reveals (secure aggregation): p − c, with c the
        agreement's bound on parties colluding with the coordinator (:class:`~ddppm.federation.agreement.Agreement`):
        colluders can subtract their own shares, and the honest parties' must still add up to the noise's law."""
        return self.parties - int(self.agreement.colluding)

    @cached_property
    def noise(self) -> Any:
        """The preprocessing's noises (:func:`~ddppm.common_task.preprocessing.preprocessing_noise`), None when
        the records are not centred."""
        if self.party_label == "none":
            return None
        noising = {"curator": 1, "agents": self.parties, "individuals": self.agreement.n}[self.party_label]
        mu_pre = split_budget(self.agreement.epsilon, self.limit, self.plan.share).mu_pre
        return preprocessing_noise(self.plan, mu_pre, self.d, noising, self.agreement.n)

    @cached_property
    def mixing(self) -> np.ndarray:
        """``W^c``: the parties' gossip network (``method_options``' topology, as ``PrivatePCA`` builds it) to the
        power of its rounds per iteration, for the gossip methods the coordinator relays."""
        W = parties_mixing_matrix(self.parties, self.options["topology"], seed=0)
        return np.linalg.matrix_power(W, int(self.options["consensus"]))

    @cached_property
    def calibration(self) -> tuple[Any, Any]:
        """The method's own calibration and the whole route's (:func:`calibrate_end_to_end`), on the public shape."""
        task = CommonTask.shape_only(self.agreement.sizes, self.d, self.k, None, int(self.options["consensus"]))
        return calibrate_end_to_end(self.method, task, float(self.agreement.epsilon), self.limit, self.noise,
                                    self.options)  # fmt: skip

    def preprocessing_generator(self) -> np.random.Generator:
        """The one-process fit's preprocessing stream (:func:`~ddppm.release.route.draw_release`)."""
        labels = ("", "preprocessing", self.party_label, float(self.agreement.epsilon), STREAM)
        return run_generators(self.agreement.seed, labels, range(1))[0]

    def method_generator(self) -> np.random.Generator:
        """The one-process fit's method stream."""
        labels = ("", self.k, self.method.name, float(self.agreement.epsilon), STREAM)
        return run_generators(self.agreement.seed, labels, range(1))[0]

    def public_randomness(self) -> Any:
        """The method stream as the coordinator uses it for public draws (an initial vector, say): numpy's
        generator, wrapped as the one-process fit wraps it under secure noise."""
        generator = self.method_generator()
        return SecureNoise(generator) if self.agreement.noise == "secure" else generator

    def box(self, lower: np.ndarray | None, upper: np.ndarray | None) -> PrivateBox | None:
        return None if lower is None else PrivateBox(np.asarray(lower), np.asarray(upper))

    def units(self, box: PrivateBox | None, released: Any) -> tuple[np.ndarray, np.ndarray]:
        """``mean_`` and ``scale_`` in the records' units, as the one-process fit releases them
        (:func:`~ddppm.common_task.centring.released_units`)."""
        return released_units(self.bounds, box, released, self.d, self.agreement.standardize)

    def recolour_scales(self, box: PrivateBox | None, released: Any) -> np.ndarray | None:
        """A recoloured centred release's private scales in the records' units
        (:func:`~ddppm.common_task.centring.record_scales`); None otherwise."""
        return record_scales(self.bounds, box, released.variance) if self.recolours else None
