"""The release's audit (ddppm.audit.release): the witness records differ in record 0 only, at opposite corners of
the declared box; the attack finds the release consistent at its claim and catches a release run at a larger ε
than it claims."""

from __future__ import annotations

import numpy as np

from ddppm.audit.release import audit_release, witness_records
from ddppm.methods import common_task_methods


def test_the_witness_records_differ_in_record_zero_at_opposite_corners() -> None:
    first, second = witness_records(50, 3, seed=1)
    np.testing.assert_array_equal(first[1:], second[1:])
    np.testing.assert_array_equal(first[0], np.zeros(3))
    np.testing.assert_array_equal(second[0], np.ones(3))
    assert first.min() >= 0 and first.max() <= 1


def test_the_release_is_consistent_and_a_broken_one_is_caught() -> None:
    method = common_task_methods()["analyze_gauss"]
    honest = audit_release("analyze_gauss", method, 1.0, 1e-5, 600, 0, 600, 4, 1)
    broken = audit_release("analyze_gauss", method, 1.0, 1e-5, 600, 0, 600, 4, 1, eps_run=40.0)
    assert honest.verdict == "consistent" and honest.eps_lower <= 1.0
    assert broken.verdict == "violated" and broken.eps_lower > 1.0
