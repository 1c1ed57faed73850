"""The release (ddppm.release.estimator.PrivatePCA): it is the bench's code (with simulation noise and a seed, the
very estimate and δ of the raw-records route's run 0, for every certified method at every trust level it serves),
its certificate composes to the target and OpenDP's map agrees, its private mean and scale are in the records'
units (large ε: the true statistics) and transform is the standardisation the method saw."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_wine

from ddppm import PrivatePCA
from ddppm.common_task import raw_records
from ddppm.common_task.budget import gdp_mu
from ddppm.common_task.certified import certified_delta
from ddppm.common_task.preprocessing import PreprocessingPlan
from ddppm.common_task.raw_records import RawRecords
from ddppm.common_task.run import TRUST_LEVELS, TRUST_ORDER, run_rows
from ddppm.core.errors import PrivacyError
from ddppm.core.network import mixing_matrix
from ddppm.data.public_prep import public_bounds
from ddppm.methods import common_task_methods
from ddppm.release.estimator import METHOD_OPTIONS

WINE = load_wine().data
_B = public_bounds("wine", WINE.shape[1])
WINE_BOUNDS = {"kind": _B.kind, "source": _B.source, "features": np.column_stack([_B.lower, _B.upper]).tolist()}
LABELS = np.arange(len(WINE)) % 3
CASES = [(name, trust) for name, method in common_task_methods().items() if method.privacy_column == "certified"
         for trust in TRUST_LEVELS if TRUST_ORDER.get(method.trust_model, -1) >= TRUST_ORDER[trust]]  # fmt: skip


@pytest.mark.parametrize(("name", "trust"), CASES)
def test_the_release_is_the_benchs_run(name: str, trust: str, monkeypatch: pytest.MonkeyPatch) -> None:
    method = common_task_methods()[name]
    k = 1 if method.max_rank == 1 else 2
    model = PrivatePCA(k, 5.0, 1e-4, WINE_BOUNDS, trust=trust, method=name, noise="simulation", random_state=11)
    model.fit(WINE, parties=LABELS)
    parts = tuple(np.flatnonzero(LABELS == j) for j in range(3))
    records = RawRecords(WINE, parts, mixing_matrix("ring", 3, seed=0), METHOD_OPTIONS["consensus"], _B,
                         "standardize")  # fmt: skip
    estimates = []

    def keep(target, name, method, row, V_hat, *args):
        estimates.append(V_hat)
        return run_rows(target, name, method, row, V_hat, *args)

    monkeypatch.setattr(raw_records, "run_rows", keep)
    bench = raw_records.raw_records_runs(records, [5.0], [1e-4], [k], 1, 1, 11, PreprocessingPlan(), METHOD_OPTIONS,
                                         methods={name: method})  # fmt: skip
    np.testing.assert_array_equal(model.components_, estimates[0][0].T)  # the same draws, bit for bit
    row = bench[bench["method"] == name].iloc[0]
    assert model.privacy_.delta == row["delta"] and model.privacy_.method_choice == "named by the user"


def test_the_certificate_composes_to_the_target_and_opendp_agrees() -> None:
    model = PrivatePCA(2, 2.0, 1e-5, WINE_BOUNDS, method="analyze_gauss", random_state=0).fit(WINE)
    cert = model.privacy_
    assert cert.delta <= 1e-5 and cert.delta == pytest.approx(1e-5, rel=1e-5)
    mu = np.sqrt(sum(r["mu"] ** 2 for r in cert.releases))
    assert mu == pytest.approx(cert.mu, rel=1e-12) and mu == pytest.approx(gdp_mu(2.0, 1e-5), rel=1e-5)
    assert certified_delta(cert.mu, 2.0) == pytest.approx(cert.delta, rel=1e-9)
    assert cert.check["agrees"] and cert.check["opendp_rho"] == pytest.approx(mu**2 / 2, rel=1e-9)
    assert cert.check["opendp_delta"] >= cert.delta  # OpenDP's zCDP conversion: valid and looser
    stages = [r["stage"] for r in cert.releases]
    assert stages[-1] == "method" and any("sum of the rows" in s for s in stages)
    assert cert.scope == "raw_records" and "secure" in cert.noise and cert.adjacency.startswith("replace_one")


def test_secure_noise_is_not_seeded() -> None:
    first, second = (PrivatePCA(2, 2.0, 1e-5, WINE_BOUNDS, method="analyze_gauss", random_state=0).fit(WINE)
                     for _ in range(2))  # fmt: skip
    assert not np.array_equal(first.mean_, second.mean_)


def _gaussian_records(n: int = 20000) -> tuple[np.ndarray, dict]:
    rng = np.random.default_rng(4)
    X = np.array([50.0, -3.0, 1000.0]) + rng.standard_normal((n, 3)) * np.array([5.0, 0.5, 100.0])
    X[:, 1] += 0.8 * (X[:, 0] - 50.0) / 5.0 * 0.5
    bounds = {"source": "test: three times the spread", "features": [[0, 100], [-6, 0], [0, 2000]]}
    return X, bounds


@pytest.mark.parametrize("standardize", [True, "center"])
def test_mean_and_scale_are_in_the_records_units(standardize: bool | str) -> None:
    X, bounds = _gaussian_records()
    model = PrivatePCA(1, 60.0, 1e-9, bounds, method="analyze_gauss", standardize=standardize, noise="simulation",
                       random_state=0).fit(X)  # fmt: skip
    np.testing.assert_allclose(model.mean_, X.mean(axis=0), rtol=2e-3)
    if standardize is True:
        np.testing.assert_allclose(model.scale_, X.std(axis=0), rtol=2e-2)
    projections = model.transform(X)
    centred = (X - X.mean(axis=0)) / (X.std(axis=0) if standardize is True else model.scale_)
    np.testing.assert_allclose(np.abs(projections[:, 0]), np.abs(centred @ model.components_[0]), rtol=0.05,
                               atol=0.05)  # fmt: skip
    restored = model.inverse_transform(projections)
    assert restored.shape == X.shape and np.isfinite(restored).all()


def test_without_standardisation_the_rows_are_the_records_over_the_row_bound() -> None:
    X, _ = _gaussian_records(2000)
    model = PrivatePCA(1, 5.0, 1e-6, {"source": "test", "row_norm": 3000.0}, standardize=False,
                       method="analyze_gauss", noise="simulation", random_state=0).fit(X)  # fmt: skip
    np.testing.assert_array_equal(model.mean_, 0.0)
    np.testing.assert_array_equal(model.scale_, 3000.0)
    assert all("preprocessing" not in r["stage"] for r in model.privacy_.releases)


def test_auto_chooses_from_public_parameters_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = {}

    def fake_advise(n, d, m, eps, delta, trust, k, looseness=2.0, methods=None, **simulation):
        import pandas as pd

        seen.update(n=n, d=d, m=m, eps=eps, delta=delta, trust=trust, k=k, methods=methods)
        members = pd.DataFrame({"method": ["ldp"], "error_mean": [0.3], "error_lo": [0.2], "error_hi": [0.4],
                                "floats_per_agent": [60], "rounds": [1]})  # fmt: skip
        return members, {"runs": 10, "beats_chance": True, "mean_errors": {"ldp": 0.3}}

    monkeypatch.setattr("ddppm.studies.advisor.advise", fake_advise)
    model = PrivatePCA(2, 3.0, 1e-6, WINE_BOUNDS, trust="local").fit(WINE, parties=LABELS)
    assert seen == {"n": 178, "d": 13, "m": 3, "eps": 3.0, "delta": 1e-6, "trust": "local", "k": 2,
                    "methods": seen["methods"]}  # fmt: skip
    assert "amin" not in seen["methods"] and "analyze_gauss" in seen["methods"]  # the secure-capable ones
    assert model.privacy_.method == "ldp" and model.privacy_.method_choice.startswith("auto:")


def test_the_list_of_party_arrays_is_the_labelled_rows() -> None:
    blocks = [WINE[LABELS == j] for j in range(3)]
    stacked = np.concatenate(blocks)
    labels = np.repeat(np.arange(3), [len(b) for b in blocks])
    kwargs = {"method": "conventional", "trust": "local", "noise": "simulation", "random_state": 3}
    first = PrivatePCA(2, 3.0, 1e-6, WINE_BOUNDS, **kwargs).fit(blocks)
    second = PrivatePCA(2, 3.0, 1e-6, WINE_BOUNDS, **kwargs).fit(stacked, parties=labels)
    np.testing.assert_array_equal(first.components_, second.components_)
    assert first.privacy_.parties == 3


def test_auto_runs_the_advisor_on_the_public_shape() -> None:
    X, bounds = _gaussian_records(400)
    model = PrivatePCA(1, 2.0, 1e-6, bounds, trust="local", random_state=0).fit(X, parties=np.arange(400) % 4)
    chosen = common_task_methods()[model.privacy_.method]
    assert chosen.secure_noise and chosen.trust_model == "local"
    assert model.privacy_.method_choice.startswith("auto: ddppm advise's simulation") and "no data read" in (
        model.privacy_.method_choice)


def test_a_tested_methods_delta_adds_its_tests_failure_and_the_certificate_says_so() -> None:
    """Cai, Xia & Zha's propose-test-release: the certified δ is the closed-form δ of μ-GDP (Dong, Roth & Su 2022,
    Cor. 2.13: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)) plus (1 + e^ε)·(the test's failure probability), and the
    certificate's ``composition`` names that term with its value; a method without a test adds nothing."""
    from scipy.stats import norm

    eps = 5.0

    def certificate_and_gdp_delta(method: str):
        model = PrivatePCA(2, eps, 1e-4, WINE_BOUNDS, method=method, noise="simulation", random_state=3).fit(WINE)
        mu = model.privacy_.mu
        return model.privacy_, norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * norm.cdf(-eps / mu - mu / 2)

    plain, gdp = certificate_and_gdp_delta("analyze_gauss")
    assert plain.delta == pytest.approx(gdp, rel=1e-12)
    assert "test" not in plain.composition

    tested, gdp = certificate_and_gdp_delta("cai_xia_zha")
    extra = tested.delta - gdp
    assert extra > 1e-4 * gdp  # the test's term is there, not round-off
    failure = float(tested.composition.split("(1 + e^ε)·")[1].split(" ")[0])
    assert extra == pytest.approx((1 + np.exp(eps)) * failure, rel=1e-6)
    assert f"{extra:.4g}" in tested.composition


def test_inverse_transform_takes_one_column_per_component() -> None:
    """A matrix of the wrong width (e.g. the records themselves) is refused with the shape it expects, not silently
    broadcast or multiplied; the right width round-trips what transform returned."""
    model = PrivatePCA(2, 5.0, 1e-4, WINE_BOUNDS, method="analyze_gauss", noise="simulation", random_state=0).fit(WINE)
    projections = model.transform(WINE[:5])
    np.testing.assert_allclose(model.transform(model.inverse_transform(projections)), projections, atol=1e-9)
    for wrong in (WINE[:5], projections[:, :1], projections[0]):
        with pytest.raises(ValueError, match=r"expected \(n, 2\)"):
            model.inverse_transform(wrong)


def test_a_method_whose_calibration_cannot_meet_the_budget_is_refused_with_its_reason() -> None:
    """`ldp`'s classic σ holds for ε < 1 only: at ε = 10⁴ its δ is 1, and the release says why (OpenDP's own
    conversion overflows at that ε: the check records NaN instead of stopping with OpenDP's error)."""
    with pytest.raises(PrivacyError, match="ldp's own calibration cannot meet"):
        PrivatePCA(1, 1e4, 1e-4, WINE_BOUNDS, trust="local", method="ldp", noise="simulation",
                   random_state=0).fit(WINE, parties=LABELS)  # fmt: skip
    model = PrivatePCA(1, 1e4, 1e-4, WINE_BOUNDS, trust="local", method="ldp_analytic", noise="simulation",
                       random_state=0).fit(WINE, parties=LABELS)  # fmt: skip
    assert model.privacy_.delta <= 1e-4 * (1 + 1e-9) and model.privacy_.check["agrees"]  # simulation: to 1e-9
