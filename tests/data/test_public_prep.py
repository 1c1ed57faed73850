"""Rows shaped by public inputs only (ddppm.data.public_prep): one raw record cannot move another prepared row, the
declared bounds are what their sources say, and clipping is measured."""

from __future__ import annotations

import re

import numpy as np
import pytest
import sklearn.datasets as skd

from ddppm.common_task.settings import oracle_bounds_entry
from ddppm.core.errors import ConfigError
from ddppm.data import load_dataset, normalize
from ddppm.data.public_prep import (
    BOUNDS_FILE,
    _declared,
    bounds_from_entry,
    check_declared,
    clipping,
    prepare_public,
    public_bounds,
)

DATASETS = sorted(_declared())


def _raw(name: str) -> np.ndarray:
    return np.array(load_dataset(name, source="default", seed=0).matrix)


def test_one_record_cannot_move_the_others_end_to_end_but_does_today():
    X = _raw("wine")
    bounds = public_bounds("wine", X.shape[1])
    extreme = X.copy()
    extreme[0] = 1e6  # one raw record replaced by an extreme one
    before, after = prepare_public(X, bounds), prepare_public(extreme, bounds)
    assert np.array_equal(before[1:], after[1:]), "end to end: every other prepared row identical, bit for bit"
    assert not np.array_equal(before[0], after[0])
    today_before, today_after = normalize(X, "standardize")[0], normalize(extreme, "standardize")[0]
    moved = np.any(today_before[1:] != today_after[1:], axis=1)
    assert moved.all(), "today's route: the replaced record moves every other row (column statistics, max norm)"


@pytest.mark.parametrize("name", DATASETS)
def test_every_declared_data_set_has_bounds_of_its_dimension_with_a_source(name):
    X = _raw(name)
    bounds = public_bounds(name, X.shape[1])
    assert bounds.kind in ("documentation", "construction", "declared") and len(bounds.source) > 20
    rows = prepare_public(X, bounds)
    assert np.linalg.norm(rows, axis=1).max() <= 1 + 1e-12
    report = clipping(X, bounds)
    assert 0 <= report.values <= report.rows <= 1
    assert report.values < 0.01, f"{name}: the declared bounds clip {report.values:.2%} of the values"


def test_a_record_at_a_corner_of_the_bounds_has_norm_one_and_the_midpoint_is_the_origin():
    bounds = public_bounds("digits", 64)
    corner, middle = np.where(np.arange(64) % 2, 16.0, 0.0), np.full(64, 8.0)
    rows = prepare_public(np.vstack([corner, middle]), bounds)
    assert np.linalg.norm(rows[0]) == pytest.approx(1.0) and np.array_equal(rows[1], np.zeros(64))


@pytest.mark.parametrize("name, loader", [("wine", skd.load_wine), ("breast_cancer", skd.load_breast_cancer)])
def test_oracle_bounds_are_the_published_table(name, loader):
    """An independent route: the Min and Max columns of the data set's own DESCR table, parsed, are the oracle
    bounds (the labelled setting oracle_bounds), and not the standard setting's."""
    table = loader().DESCR.split(":Summary Statistics:")[1].split(":Missing Attribute Values:")[0]
    rows = [re.findall(r"-?\d+\.?\d*", line.split(":", 1)[1])[:2] for line in table.splitlines() if ":" in line]
    published = np.array([[float(lo), float(hi)] for lo, hi in rows])
    oracle = bounds_from_entry(oracle_bounds_entry(name), published.shape[0], "oracle")
    np.testing.assert_array_equal(np.column_stack([oracle.lower, oracle.upper]), published)
    standard = public_bounds(name, published.shape[0])
    assert not np.any((standard.lower == published[:, 0]) & (standard.upper == published[:, 1]))


@pytest.mark.parametrize("name", DATASETS)
def test_no_standard_bounds_are_read_from_the_records(name):
    """The standard setting's bounds are not the records' own range: a declared or documented bound equals the
    records' min and max together on at most a quarter of the features. Bounds by construction (a generator's, an
    encoding's such as digits' 0..16 counts) may be attained by the records, and say so."""
    X = _raw(name)
    bounds = public_bounds(name, X.shape[1])
    if bounds.kind == "construction":
        assert "construction" in bounds.source or "ddppm.data.synthetic" in bounds.source
        return
    at_range = np.isclose(bounds.lower, X.min(axis=0)) & np.isclose(bounds.upper, X.max(axis=0))
    assert at_range.mean() <= 0.25, f"{name}: bounds equal the records' min and max on {at_range.sum()} features"


def test_clipping_alone_in_a_case_worked_by_hand():
    """Swap-symmetric records, mean 0: four on the anti-diagonal, (±1, ∓1), and two far out on the diagonal,
    ±(3, 3). Standardised with the true statistics the cross-product is −4 + 18 > 0, so the top direction is
    (1, 1)/√2; clipped to [−1, 1] the far ones become ±(1, 1) and it is −4 + 2 < 0: the top direction turns to
    (1, −1)/√2, a right angle, so the bias is exactly 1 (k = 1)."""
    from ddppm.data.public_prep import PublicBounds

    X = np.array([[1.0, -1.0], [-1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [3.0, 3.0], [-3.0, -3.0]])
    bounds = PublicBounds(np.array([-1.0, -1.0]), np.array([1.0, 1.0]), "declared", "a worked example")
    report = clipping(X, bounds, ranks=(1,))
    assert report.values == pytest.approx(4 / 12) and report.rows == pytest.approx(2 / 6)
    assert report.bias[1] == pytest.approx(1.0, abs=1e-12)
    inside = clipping(X[:4], bounds, ranks=(1,))
    assert inside.values == 0 and inside.bias[1] == pytest.approx(0.0, abs=1e-7)  # √(round-off)


def test_a_data_set_without_bounds_names_the_key_and_the_fix():
    with pytest.raises(ConfigError, match=r"dataset_options\.mine\.public_bounds: .* cannot run from the raw records"):
        public_bounds("mine", 3)
    with pytest.raises(ConfigError, match=r"public_bounds\.features: 2 pairs for 3 features"):
        public_bounds("x", 3, {"kind": "declared", "source": "ours", "features": [[0, 1], [0, 1]]})
    with pytest.raises(ConfigError, match="source"):
        public_bounds("x", 1, {"kind": "declared", "source": " ", "all_features": [0, 1]})
    with pytest.raises(ConfigError, match=r"dataset_options\.mine\.public_bounds: give `features` .* not both"):
        check_declared("mine", {"kind": "declared", "source": "ours", "features": [[0, 1]], "all_features": [0, 1]})
    assert BOUNDS_FILE.exists()


def test_the_declared_bounds_are_part_of_the_code_a_job_records():
    """The records are data read by a module (ddppm.data.specs): the code hash of every job that loads or bounds a
    data set covers them, so editing them reruns those jobs (tests/workflow/test_workflow.py checks it on a dry run)."""
    from ddppm.core.provenance import code_files
    from tests.conftest import REPO

    for script in ("prepare_dataset.py", "common_runs.py", "common_clipping.py"):
        assert BOUNDS_FILE.resolve() in code_files(REPO / "workflow" / "scripts" / script), script


def test_widened_bounds_keep_their_midpoint_and_non_negative_features():
    """Widened ×w around the midpoint (worked by hand), a feature declared non-negative stays non-negative, the
    row-norm bound grows ×w, and a factor below 1 is refused."""
    from ddppm.core.errors import ConfigError as Refused
    from ddppm.data.public_prep import PublicBounds, widen_bounds

    bounds = PublicBounds(np.array([0.0, -1.0, 10.0]), np.array([4.0, 1.0, 20.0]), "declared", "a test", row_norm=3.0)
    wide = widen_bounds(bounds, 2.0)
    np.testing.assert_allclose(wide.lower, [0.0, -2.0, 5.0])  # 2 − 4 → 0: cannot be negative
    np.testing.assert_allclose(wide.upper, [6.0, 2.0, 25.0])
    assert wide.row_norm == 6.0 and widen_bounds(bounds, 1.0).lower.tolist() == bounds.lower.tolist()
    with pytest.raises(Refused, match="bounds.widths"):
        widen_bounds(bounds, 0.5)
