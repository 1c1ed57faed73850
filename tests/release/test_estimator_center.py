"""``standardize="center"`` is the centred PCA, scikit-learn's: at a budget where the noise no longer matters the
release's direction is ``sklearn.decomposition.PCA``'s on the same clipped records, whatever the features' units
(one common scale, never one per feature); ``scale_`` is that common factor and ``transform`` is scikit-learn's up
to it; the same from ``ddppm fit --center-only`` and from the bench's setting that centres without scaling."""

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
from ddppm.common_task.preprocessing import PreprocessingPlan
from ddppm.common_task.raw_records import RawRecords, raw_records_runs, reference_task
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
    records (before 2026-11-29 each feature was divided by its own box width: 0.8 away on a survey's records).
    k = 1: at n ≤ 569 the raw units' second eigenvalue is 10⁻³ of the first on Wine and Breast Cancer, below the
    noise even at this ε (μ = 137), so k = 2 measures the noise, not the target (docs/release.md)."""
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
