"""Bad input to a release (ddppm.release): each is refused with an error naming the argument and the fix, before
any noise is drawn (a source that counts draws sees none) and, from the command line, with nothing written."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm import PrivatePCA
from ddppm.release import noise as release_noise
from ddppm.release.estimator import ClippingWarning

X = np.random.default_rng(0).uniform(0, 10, (200, 4))
BOUNDS = {"source": "test: the instrument reads 0 to 10", "features": [[0, 10]] * 4}


@pytest.fixture(autouse=True)
def no_noise_drawn(monkeypatch: pytest.MonkeyPatch):
    """Fails the test if any secure Gaussian is drawn."""
    def refuse(*args, **kwargs):
        raise AssertionError("noise was drawn before the input was checked")

    monkeypatch.setattr(release_noise.SecureNoise, "gaussian_release", refuse)


def _fit(data=X, parties=None, **changes):
    arguments = {"n_components": 1, "epsilon": 1.0, "delta": 1e-6, "bounds": BOUNDS, "method": "analyze_gauss",
                 **changes}  # fmt: skip
    return PrivatePCA(**arguments).fit(data, parties=parties)


def _with(value, row=3, column=1):
    data = X.copy()
    data[row, column] = value
    return data


@pytest.mark.parametrize(
    ("case", "match"),
    [
        (lambda: _fit(_with(np.nan)), "NaN"),
        (lambda: _fit(_with(np.inf)), "infinity"),
        (lambda: _fit(np.array([["a", "1", "2", "3"]] * 10, dtype=object)), "string|float"),
        (lambda: _fit([X[:5], X[:0]]), "fewer rows than parties|parties"),
        (lambda: _fit(delta=1 / 200), r"delta: .* \(0, 1/n\)"),
        (lambda: _fit(epsilon=0.0), "epsilon: .* positive"),
        (lambda: _fit(epsilon=-1.0), "epsilon: .* positive"),
        (lambda: _fit(n_components=4), "n_components: .* 1 <= k < d"),
        (lambda: _fit(bounds={**BOUNDS, "features": [[0, 10]] * 3}), "bounds.features: 3 pairs for 4 features"),
        (lambda: _fit(bounds={**BOUNDS, "features": [[0, 10], [5, 1], [0, 10], [0, 10]]}),
         r"bounds.features\[1\]: lower 5 is not below upper 1"),
        (lambda: _fit(bounds=None), "bounds: .* never from the records"),
        (lambda: _fit(bounds={"features": [[0, 10]] * 4}), "bounds.source"),
        (lambda: _fit(bounds={"source": "units", "row_norm": 20.0}), "row_norm alone .* standardize=False"),
        (lambda: _fit(trust="local"), "needs trust 'central', more than trust='local'"),
        (lambda: _fit(trust="nobody"), "trust: 'nobody' must be one of"),
        (lambda: _fit(method="dp_pca", n_components=2), "dp_pca estimates at most 1"),
        (lambda: _fit(method="amin"), "amin cannot draw secure noise"),
        (lambda: _fit(method="no_such_method"), "not a method of the common task"),
        (lambda: _fit(noise="fast"), "noise: 'fast'"),
        (lambda: _fit(standardize="yes"), "standardize: 'yes'"),
        (lambda: _fit(parties=np.arange(5)), "parties: give one label per row"),
        (lambda: _fit(random_state=np.random.default_rng(0)), "random_state: .* integer or None"),
        (lambda: _fit(standardize=False, bounds={"source": "units", "row_norm": -1}), "row_norm: -1 must be a pos"),
        (lambda: _fit(standardize=False, bounds={"source": "units", "row_norm": "far"}), "row_norm: 'far' must be"),
        (lambda: _fit(bounds={"source": "units", "features": {"a": [0, 1]}}), "features: give a list"),
        (lambda: _fit(bounds={"source": "units", "features": [[0, 10], [0], [0, 10], [0, 10]]}),
         r"features: give one \[lower, upper\] pair of numbers per feature"),
        (lambda: _fit(parties=np.where(np.arange(200) == 5, np.nan, 1.0)), "1 row.* have no party label"),
        (lambda: _fit(method_options={"iterations": 0}), "method_options.iterations: 0 must be a positive"),
        (lambda: _fit(method_options={"iterations": 2.7}), "method_options.iterations: 2.7 must be a positive"),
        (lambda: _fit(method_options={"topology": "moebius"}), "method_options.topology: 'moebius'"),
        (lambda: _fit(method_options={"adjacency": "distance_one"}), "method_options: .*adjacency.* cannot be set"),
        # unknown and contradictory bounds keys: refused, never ignored (issue 63)
        (lambda: _fit(bounds={**BOUNDS, "featurs": [[0, 10]] * 4}), r"unknown key 'featurs' \(did you mean 'features'"),
        (lambda: _fit(bounds={**BOUNDS, "unit": "cm"}), "unknown key 'unit'; the keys are source, kind"),
        (lambda: _fit(bounds={**BOUNDS, "all_features": [0, 10]}), "give `features` .* or `all_features` .* not both"),
        (lambda: _fit(bounds={**BOUNDS, "row_norm": 20.0}), "row_norm scales the rows only with standardize=False"),
        (lambda: _fit(standardize="center", bounds={**BOUNDS, "row_norm": 20.0}), "with standardize='center'"),
    ],
)
def test_bad_input_is_refused_before_any_noise(case, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        case()


def test_clipping_is_a_warning_to_the_holder_and_not_kept_on_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()  # this one fits: noise is drawn
    data = _with(12.0, row=3, column=1)
    data[9, 2] = -1.0  # two values outside the declared 0..10
    with pytest.warns(ClippingWarning, match="^2 value"):
        model = _fit(data, noise="simulation")
    assert not any("clip" in name for name in vars(model))


def test_numpy_booleans_read_as_booleans(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.undo()
    model = _fit(standardize=np.True_, noise="simulation", random_state=0)
    assert len(model.privacy_.releases) > 1  # the private standardisation ran


def test_a_row_norm_with_feature_bounds_is_read_when_not_standardising() -> None:
    """Not a contradiction at ``standardize=False``: the rows are scaled by the declared row norm."""
    from ddppm.release.inputs import declared_bounds

    bounds = declared_bounds({**BOUNDS, "row_norm": 20.0}, 4, False)
    assert bounds.row_norm == 20.0 and bounds.row_scale == 20.0
