"""``PrivatePCA.fit`` and ``fit_stream`` on generated malformed inputs (issue 63, Hypothesis): arrays with NaN,
infinities, huge and tiny values, too few rows or columns, wrong dimensions, and bounds mappings with wrong types,
missing and unknown keys. Every case ends in a release or in a ``ValueError`` (ddppm's ``ConfigError`` and
``DataError`` are ValueErrors), raised before any noise is drawn and with nothing set on the model."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ddppm import PrivatePCA
from ddppm.release import noise

CASES = int(os.environ.get("DDPPM_FUZZ_CASES", 150))
values = st.one_of(st.floats(-30, 30), st.sampled_from([np.nan, np.inf, -np.inf, 1e308, -1e308, 5e-324, 0.0]))
arrays = st.one_of(
    hnp.arrays(np.float64, st.tuples(st.integers(4, 12), st.integers(2, 5)), elements=st.floats(-40, 40)),  # clean
    hnp.arrays(np.float64, st.tuples(st.integers(0, 12), st.integers(0, 5)), elements=values),
    hnp.arrays(np.float64, st.integers(0, 6), elements=values),  # one dimension
    hnp.arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 2)), elements=values),
)
bounds = st.one_of(
    st.just({"source": "units", "all_features": [-30, 30]}),
    st.fixed_dictionaries({}, optional={
        "source": st.sampled_from(["units", "", 5, None]),
        "all_features": st.sampled_from([[-30, 30], [30, -30], [0, 0], [np.nan, 1], [-np.inf, np.inf], "[-30, 30]"]),
        "features": st.sampled_from([[[-30, 30]] * 3, [[-30, 30]], {"a": [0, 1]}, [[1, "b"]] * 3, None]),
        "kind": st.sampled_from(["declared", "whatever", 3]),
        "row_norm": st.sampled_from([5.0, 0.0, -2.0, "x"]),
        "lower": st.just([0, 0, 0]),  # not a key of ours
    }),
    st.sampled_from([None, "units", 42, [[-30, 30]], {"source"}]),
)  # fmt: skip
settings_ = settings(max_examples=CASES, deadline=None, database=None, derandomize="DDPPM_FUZZ_CASES" not in os.environ,
                     suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])  # fmt: skip


def _outcome(model: PrivatePCA, fit: Any, drawn: list[str]) -> str:
    drawn.clear()
    try:
        fit()
    except ValueError as error:  # ConfigError, DataError, and scikit-learn's checks of the array
        assert drawn == [], f"noise drawn before the refusal: {error}"
        assert not hasattr(model, "components_") and str(error)
        return "refused"
    assert np.all(np.isfinite(model.components_)) and model.privacy_.delta <= 1e-3
    return "released"


@pytest.mark.parametrize("route", ["fit", "fit_stream"])
def test_malformed_arrays_and_bounds_are_released_or_refused_cleanly(route: str, drawn) -> None:
    outcomes: list[str] = []

    @settings_
    @given(X=arrays, entry=bounds, k=st.sampled_from([1, 1, 2, 0, -1, 1.5]))
    def case(X: np.ndarray, entry: Any, k: Any) -> None:
        model = PrivatePCA(k, 4.0, 1e-3, entry, method="analyze_gauss")
        outcomes.append(_outcome(model, lambda: getattr(model, route)(X), drawn))

    case()
    print(f"PrivatePCA.{route}: {len(outcomes)} generated inputs, {outcomes.count('released')} released, "
          f"{outcomes.count('refused')} refused")  # fmt: skip
    assert len(outcomes) >= CASES and "refused" in outcomes


def test_the_counting_fixture_sees_a_release(drawn) -> None:
    """The fixture the fuzz tests rely on counts real draws (else 'nothing drawn' would hold vacuously)."""
    X = np.random.default_rng(0).normal(size=(50, 3))
    PrivatePCA(1, 4.0, 1e-3, {"source": "units", "all_features": [-30, 30]}, method="analyze_gauss").fit(X)
    assert len(drawn) >= 2 and noise.SecureNoise.gaussian_release.__name__ == "counted"
