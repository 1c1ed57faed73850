"""``standardize="center"`` is the centred PCA, scikit-learn's: at a budget where the noise no longer matters the
release's directions are ``sklearn.decomposition.PCA``'s on the same clipped records, whatever the features' units
(on mixed units, a second-moment method's release recoloured by the private scales: every direction, not only the
first); ``scale_`` is one common factor and ``transform`` is scikit-learn's up to it; the same from ``ddppm fit
--center-only``, from the bench's setting that centres without scaling and from a federation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.decomposition import PCA

from ddppm import PrivatePCA
from ddppm.cli import main
from ddppm.common_task.centring import mixed_units, recolours
from ddppm.common_task.preprocessing import PreprocessingPlan
from ddppm.common_task.raw_records import RawRecords, raw_records_runs, reference_task
from ddppm.data.datasets import load_dataset
from ddppm.data.public_prep import public_bounds
from ddppm.methods import common_task_methods
from ddppm.release.estimator import METHOD_OPTIONS

LOADERS = {"wine": lambda: load_wine().data, "diabetes": lambda: load_diabetes(scaled=False).data,
           "breast_cancer": lambda: load_breast_cancer().data}  # fmt: skip


def _distance(components: np.ndarray, reference: np.ndarray) -> float:
    """‖V̂V̂ᵀ − VVᵀ‖_F/√(2k) between two k × d row bases."""
    k = reference.shape[0]
    return float(np.linalg.norm(components.T @ components - reference.T @ reference) / np.sqrt(2 * k))


def _declared(name: str, d: int) -> tuple[dict, np.ndarray, np.ndarray]:
    b = public_bounds(name, d)
    entry = {"kind": b.kind, "source": b.source, "features": np.column_stack([b.lower, b.upper]).tolist()}
    return entry, b.lower, b.upper


def _scales_apart(n: int = 4000) -> tuple[np.ndarray, dict, np.ndarray, np.ndarray]:
    """Four features whose spreads differ by 10³ (one factor shared by the two widest), inside declared bounds."""
    rng = np.random.default_rng(0)
    factor = rng.standard_normal((n, 2))
    noise = rng.standard_normal((n, 2))
    X = np.column_stack([5e4 + 1000 * factor[:, 0], 0.3 * factor[:, 0] + factor[:, 1], 1 + 0.01 * noise[:, 0],
                         10 * factor[:, 1] + 3 * noise[:, 1]])  # fmt: skip
    lower, upper = np.array([0.0, -10, 0, -100]), np.array([1e5, 10, 2, 100])
    return X, {"source": "the simulation's design", "features": np.column_stack([lower, upper]).tolist()}, lower, upper


@pytest.mark.parametrize("name", [*LOADERS, "scales_apart"])
def test_centring_only_gives_scikit_learns_direction(name: str) -> None:
    """ε = 10⁴ with simulation noise: the first direction is within 0.01 of scikit-learn's PCA of the clipped
    records (before 2026-11-29 each feature was divided by its own box width: 0.8 away on a survey's records);
    k ≥ 2 below."""
    if name == "scales_apart":
        X, bounds, lower, upper = _scales_apart()
    else:
        X = LOADERS[name]()
        bounds, lower, upper = _declared(name, X.shape[1])
    reference = PCA(1).fit(np.clip(X, lower, upper)).components_
    for seed in range(3):
        model = PrivatePCA(1, 1e4, 1e-6 if len(X) > 1000 else 1e-4, bounds, method="analyze_gauss",
                           standardize="center", noise="simulation", random_state=seed).fit(X)  # fmt: skip
        assert _distance(model.components_, reference) <= 0.01
        assert np.all(model.scale_ == model.scale_[0])  # one factor for every feature


def test_scale_and_transform_are_scikit_learns_up_to_one_factor() -> None:
    X, bounds, _, upper = _scales_apart(20000)
    model = PrivatePCA(1, 1e4, 1e-6, bounds, method="analyze_gauss", standardize="center", noise="simulation",
                       random_state=0).fit(X)  # fmt: skip
    sklearn = PCA(1).fit(X)
    assert _distance(model.components_, sklearn.components_) <= 0.01
    np.testing.assert_allclose(model.mean_, X.mean(axis=0), atol=0.01 * X.std(axis=0).max())
    # transform = ((X − mean_)/scale_) @ components_ᵀ: scikit-learn's scores over the one common factor, up to sign
    ours, theirs = model.transform(X), sklearn.transform(X) / model.scale_[0]
    signs = np.sign(np.sum(ours * theirs, axis=0))
    np.testing.assert_allclose(ours * signs, theirs, atol=0.02 * np.abs(theirs).max())
    assert model.scale_[0] <= np.linalg.norm(upper - [0, -10, 0, -100]) / 2 + 1e-9  # the box's half-diagonal


def test_ddppm_fit_center_only_is_the_centred_pca(tmp_path: Path) -> None:
    X = load_diabetes(scaled=False).data
    bounds, lower, upper = _declared("diabetes", X.shape[1])
    columns = [f"x{j}" for j in range(X.shape[1])]
    pd.DataFrame(X, columns=columns).to_csv(tmp_path / "d.csv", index=False)
    features = {c: pair for c, pair in zip(columns, bounds["features"], strict=True)}
    (tmp_path / "b.yaml").write_text(yaml.safe_dump({"source": bounds["source"], "features": features}))
    code = main(["fit", str(tmp_path / "d.csv"), "--bounds", str(tmp_path / "b.yaml"), "--k", "1", "--eps", "1e4",
                 "--delta", "1e-4", "--method", "analyze_gauss", "--center-only", "--out", str(tmp_path / "r.json")])
    assert code == 0
    release = json.loads((tmp_path / "r.json").read_text())
    reference = PCA(1).fit(np.clip(X, lower, upper)).components_
    assert _distance(np.asarray(release["components"]), reference) <= 0.01
    assert len(set(release["scale"])) == 1


def test_the_benchs_centring_setting_measures_against_the_centred_pca() -> None:
    """``common.preprocessing.scale: false``: the bench's target is the centred records' PCA, and the error of
    AnalyzeGauss at ε = 10⁴ against it is within 0.01 (against the standardised target it would be far)."""
    X = load_diabetes(scaled=False).data
    b = public_bounds("diabetes", X.shape[1])
    parts = (np.arange(len(X)),)
    records = RawRecords(X, parts, None, METHOD_OPTIONS["consensus"], b, "standardize")
    target = reference_task(records, 1, centre_only=True)
    np.testing.assert_allclose(np.abs(target.V[:, 0]), np.abs(PCA(1).fit(np.clip(X, b.lower, b.upper)).components_[0]),
                               atol=1e-9)  # fmt: skip
    runs = raw_records_runs(records, [1e4], [1e-4], [1], 4, 2, 0, PreprocessingPlan(scale=False), METHOD_OPTIONS,
                            methods={"analyze_gauss": common_task_methods()["analyze_gauss"]})  # fmt: skip
    assert runs.loc[runs["method"] == "analyze_gauss", "error"].max() <= 0.01


CENTRED_SETS = ["mixed_units", "wine", "diabetes", "ami_synthetic", "digits", "heavy_tailed", "sparse_counts"]
"""The bench's sets and the project's synthetic ones where the centred release meets 0.02 at ε = 10⁴ for k ≤ 3.
Breast Cancer does not at k ≥ 2: its second and third directions lie among its largest-unit features (areas), the
third eigengap is 1.5·10⁻³ of the first, and at n = 569 AnalyzeGauss's noise at ε = 10⁴ is that large (measured:
0.028 and 0.061 at k = 2, 3; 0.008 and 0.009 at ε = 10⁵; 0.13 and 0.59 by the one common scale)."""


def _registered(name: str) -> tuple[np.ndarray, dict]:
    X = np.asarray(load_dataset(name).matrix, float)
    entry, lower, upper = _declared(name, X.shape[1])
    return np.clip(X, lower, upper), entry


@pytest.mark.parametrize("name", CENTRED_SETS)
def test_the_centred_release_keeps_the_first_three_directions_at_epsilon_1e4(name: str) -> None:
    """Issue 73, item 1: with one common scale the second eigengap on mixed units was 10⁻⁶ to 10⁻⁹ of the first,
    and k = 2 stayed near chance at every ε (0.54 at ε = 10⁴ on a morphology table)."""
    X, bounds = _registered(name)
    for k in (1, 2, 3):
        reference = PCA(k).fit(X).components_
        errors = [_distance(PrivatePCA(k, 1e4, 1e-6, bounds, method="analyze_gauss", standardize="center",
                                       noise="simulation", random_state=seed).fit(X).components_, reference)
                  for seed in range(3)]  # fmt: skip
        assert np.mean(errors) <= 0.02, (k, errors)


def test_breast_cancers_minor_directions_are_noise_limited_at_1e4_and_met_at_1e5() -> None:
    X, bounds = _registered("breast_cancer")
    for k, eps, most in ((1, 1e4, 0.02), (2, 1e5, 0.02), (3, 1e5, 0.02), (3, 1e4, 0.1)):
        reference = PCA(k).fit(X).components_
        errors = [_distance(PrivatePCA(k, eps, 1e-6, bounds, method="analyze_gauss", standardize="center",
                                       noise="simulation", random_state=seed).fit(X).components_, reference)
                  for seed in range(3)]  # fmt: skip
        assert np.mean(errors) <= most, (k, eps, errors)


@pytest.mark.parametrize("name", ["mixed_units", "wine", "diabetes"])
def test_at_epsilon_5_the_centred_release_is_no_worse_than_the_standardised_against_its_own_target(name) -> None:
    X, bounds = _registered(name)
    standardised = (X - X.mean(axis=0)) / X.std(axis=0)

    def mean_error(k: int, standardize: bool | str, target: np.ndarray) -> float:
        reference = PCA(k).fit(target).components_
        fits = [PrivatePCA(k, 5.0, 1e-6, bounds, method="analyze_gauss", standardize=standardize, noise="simulation",
                           random_state=seed).fit(X) for seed in range(6)]  # fmt: skip
        return float(np.mean([_distance(fit.components_, reference) for fit in fits]))

    for k in (2, 3):
        assert mean_error(k, "center", X) <= mean_error(k, True, standardised) + 0.02


def test_the_route_is_chosen_by_the_declared_bounds_and_the_method_alone() -> None:
    methods = common_task_methods()
    X, mixed = _registered("mixed_units")
    _, same = _registered("digits")
    assert mixed_units(public_bounds("mixed_units", 5)) and not mixed_units(public_bounds("digits", 64))
    assert recolours(methods["analyze_gauss"], "center", public_bounds("mixed_units", 5))
    assert not recolours(methods["ppm_decentralised"], "center", public_bounds("mixed_units", 5))
    assert not recolours(methods["analyze_gauss"], True, public_bounds("mixed_units", 5))
    assert not recolours(methods["analyze_gauss"], "center", public_bounds("digits", 64))
    # a centred release recoloured releases the variances (the standardised route's releases, and its certificate)
    centred = PrivatePCA(2, 5.0, 1e-6, mixed, method="analyze_gauss", standardize="center", noise="simulation",
                         random_state=0).fit(X)  # fmt: skip
    scaled = PrivatePCA(2, 5.0, 1e-6, mixed, method="analyze_gauss", standardize=True, noise="simulation",
                        random_state=0).fit(X)  # fmt: skip
    assert [r["stage"] for r in centred.privacy_.releases] == [r["stage"] for r in scaled.privacy_.releases]
    assert centred.privacy_.delta == scaled.privacy_.delta
    np.testing.assert_array_equal(centred.mean_, scaled.mean_)  # the same draws: the same released mean
    assert np.all(centred.scale_ == centred.scale_[0])  # one factor: transform is scikit-learn's up to it


def test_a_second_moment_is_what_the_estimate_takes_the_top_k_of() -> None:
    """Every method that says it releases a second moment returns, from the same generators, the top k of it."""
    from ddppm.common_task.base import top_k
    from ddppm.common_task.task import CommonTask

    rng = np.random.default_rng(0)
    rows = rng.normal(size=(300, 6)) * [3, 1, 1, 0.5, 0.2, 0.1]
    rows /= np.maximum(1.0, np.linalg.norm(rows, axis=1, keepdims=True))
    task = CommonTask(rows, (np.arange(150), np.arange(150, 300)), 2)
    for name, method in common_task_methods().items():
        if not method.second_moment:
            continue
        own = method.common_calibrate(task, 5.0, 1e-6, METHOD_OPTIONS)
        moments = method.common_second_moment(task, own, [np.random.default_rng(4)], METHOD_OPTIONS)
        estimate = method.common_estimate(task, own, [np.random.default_rng(4)], METHOD_OPTIONS)
        assert moments.shape == (1, 6, 6), name
        expected = top_k(moments, 2)[0]
        np.testing.assert_allclose(np.abs(expected.T @ estimate[0]).diagonal(), 1.0, atol=1e-8, err_msg=name)
        # unbiased up to one factor (the sum XᵀX, or Wang & Xu's average XᵀX/n): the noise averages out, with
        # ldp's n σ² I removed, so recolouring turns no noise into a direction
        many = method.common_second_moment(task, own, [np.random.default_rng(s) for s in range(200)], METHOD_OPTIONS)
        factor = 1.0 / task.n if name == "ldppca_gaussian" else 1.0
        scale = float(np.abs(many - factor * task.gram).std())
        np.testing.assert_allclose(many.mean(axis=0), factor * task.gram, atol=6 * scale / np.sqrt(200), err_msg=name)
