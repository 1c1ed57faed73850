"""What the coordinator and every party compute from the public agreement alone (ddppm.federation.public): the
calibration on the rows' shape equals the one-process fit's on the real rows (no calibration reads a value), and
the generators are the one-process fit's streams."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.common_task.preprocessing import PreprocessingPlan, preprocessing_noise
from ddppm.common_task.raw_records import calibrate_end_to_end
from ddppm.common_task.task import CommonTask
from ddppm.federation.agreement import Agreement
from ddppm.federation.public import PublicRelease
from ddppm.methods import common_task_methods
from tests.federation.conftest import BOUNDS, SIZES

SERVED = {"local": "local", "gossip": "local", "secure_aggregation": "secure_aggregation"}


@pytest.mark.parametrize("method", sorted(n for n, m in common_task_methods().items()
                                          if m.privacy_column == "certified" and m.trust_model in SERVED))  # fmt: skip
def test_no_calibration_reads_the_rows_values(method):
    trust = SERVED[common_task_methods()[method].trust_model]
    agreement = Agreement(1, 2.0, 1e-6, BOUNDS, SIZES, method, trust=trust, noise="simulation")
    public = PublicRelease(agreement, 5)
    rows = np.random.default_rng(0).normal(size=(agreement.n, 5))
    rows /= np.maximum(1.0, np.linalg.norm(rows, axis=1, keepdims=True))
    parts = tuple(np.split(np.arange(agreement.n), np.cumsum(SIZES)[:-1]))
    task = CommonTask(rows, parts, 1, None, int(public.options["consensus"]))
    noise = preprocessing_noise(PreprocessingPlan(), public.noise.mu, 5, public.noise.parties, agreement.n)
    own, row = calibrate_end_to_end(public.method, task, 2.0, 1e-6, noise, public.options)
    assert public.calibration[0].params == own.params and public.calibration[1].delta == row.delta


def test_the_generators_are_the_one_process_streams():
    public = PublicRelease(Agreement(2, 2.0, 1e-6, BOUNDS, SIZES, "conventional", noise="simulation", seed=4), 5)
    first, again = public.method_generator(), public.method_generator()
    assert first.standard_normal() == again.standard_normal()
    assert public.preprocessing_generator().standard_normal() != public.method_generator().standard_normal()
