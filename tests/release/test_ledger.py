"""A privacy ledger per data set (ddppm.release.ledger): exact Gaussian composition checked against the closed form
of a composed Gaussian and dp-accounting's PLD accountant, the basic sum otherwise; a fit refused by its ledger
draws nothing; corrupt, foreign and spent ledgers stop with a clear error; ``ddppm fit --ledger`` and
``ddppm ledger``."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm
from sklearn.datasets import load_wine

from ddppm import PrivacyLedger, PrivatePCA
from ddppm.cli import main
from ddppm.common_task.budget import gdp_mu
from ddppm.release import estimator
from ddppm.release.ledger import LedgerError, composed_delta, records_fingerprint, within_budget

WINE_BOUNDS = {"source": "test: a wide box", "all_features": [-50.0, 2000.0]}


@pytest.fixture
def wine() -> np.ndarray:
    return load_wine(return_X_y=True)[0]


def _fit(X: np.ndarray, budget, eps: float = 1.0, method: str = "analyze_gauss", seed: int = 0) -> PrivatePCA:
    return PrivatePCA(2, eps, 1e-6, WINE_BOUNDS, method=method, noise="simulation", random_state=seed,
                      budget=budget).fit(X)  # fmt: skip


def _gaussian_delta(mu: float, eps: float) -> float:
    """δ(ε) of μ-GDP by its closed form (Dong, Roth & Su 2022, Corollary 2.13)."""
    return float(norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * norm.cdf(-eps / mu - mu / 2))


def test_gaussian_releases_compose_exactly_as_one_gaussian_of_the_summed_mu_squared():
    releases = [{"epsilon": e, "delta": 1e-6, "mu": gdp_mu(e, 1e-6)} for e in (0.5, 1.0, 2.0)]
    route, eps, delta = composed_delta(releases, 4.0)
    mu = np.sqrt(sum(r["mu"] ** 2 for r in releases))
    assert (route, eps) == ("exact", 4.0)
    assert delta == pytest.approx(_gaussian_delta(mu, 4.0), rel=1e-9)
    dp_accounting = pytest.importorskip("dp_accounting", reason="the test extra installs dp-accounting")
    from dp_accounting import pld

    accountant = pld.PLDAccountant(value_discretization_interval=1e-5)
    for r in releases:
        accountant.compose(dp_accounting.GaussianDpEvent(1 / r["mu"]))
    assert accountant.get_delta(4.0) == pytest.approx(delta, rel=1e-3)


def test_a_release_that_is_not_gaussian_makes_the_ledger_add_epsilons_and_deltas():
    releases = [{"epsilon": 1.0, "delta": 1e-6, "mu": gdp_mu(1.0, 1e-6)}, {"epsilon": 0.5, "delta": 0.0, "mu": None}]
    assert composed_delta(releases, 3.0) == ("basic", 1.5, 1e-6)
    assert within_budget(releases, {"epsilon": 1.5, "delta": 1e-6})[0]
    assert not within_budget(releases, {"epsilon": 1.4, "delta": 1e-6})[0]


def test_the_exact_route_lets_more_releases_through_than_the_basic_sum():
    """Four releases at ε = 1 within (ε_B, δ_B) = (3, 1e-5): the basic sum says 4 > 3, the exact composition fits."""
    releases = [{"epsilon": 1.0, "delta": 1e-7, "mu": gdp_mu(1.0, 1e-7)}] * 4
    assert within_budget(releases, {"epsilon": 3.0, "delta": 1e-5})[0]
    assert not within_budget([{**r, "mu": None} for r in releases], {"epsilon": 3.0, "delta": 1e-5})[0]


def test_fits_are_recorded_until_the_budget_is_spent_then_refused_with_nothing_drawn(tmp_path, wine, monkeypatch):
    path = tmp_path / "wine.ledger.json"
    ledger = PrivacyLedger.create(path, "wine", epsilon=2.0, delta=1e-5)
    first = _fit(wine, ledger)
    _fit(wine, str(path), seed=1)
    state = ledger.state()
    assert [r["status"] for r in state["releases"]] == ["released", "released"]  # one per run, its latest record
    assert [r["status"] for r in state["chain"]] == ["pending", "released"] * 2  # appended, never rewritten
    assert [r["mu"] for r in state["releases"]] == [pytest.approx(gdp_mu(1.0, 1e-6))] * 2
    assert state["fingerprint"] == records_fingerprint(wine)
    assert state["releases"][0]["delta"] == max(first.privacy_.delta, 1e-6)  # the certificate's, never below
    written = path.read_bytes()
    drawn = []
    monkeypatch.setattr(estimator, "draw_release", lambda *a, **k: drawn.append(a))
    with pytest.raises(LedgerError, match="would pass the budget of 'wine'.*Nothing was drawn"):
        _fit(wine, ledger, eps=3.0)  # with it δ = 0.0017 at ε_B = 2 (a third at ε = 1.5 would fit: 4.3e-6)
    assert drawn == [] and path.read_bytes() == written


def test_a_fit_that_fails_after_reserving_is_withdrawn_and_counts_nothing(tmp_path, wine, monkeypatch):
    ledger = PrivacyLedger.create(tmp_path / "l.json", "wine", epsilon=1.0, delta=1e-5)

    def fails(*args, **kwargs):
        raise RuntimeError("killed while drawing")

    with monkeypatch.context() as patch:
        patch.setattr(estimator, "draw_release", fails)
        with pytest.raises(RuntimeError, match="killed"):
            _fit(wine, ledger)
    state = ledger.state()
    assert [r["status"] for r in state["chain"]] == ["pending", "withdrawn"]
    assert [r["status"] for r in state["releases"]] == ["withdrawn"]
    assert ledger.summary()["spent"] == {"composition": "basic", "epsilon": 0.0, "delta": 0.0}
    _fit(wine, ledger)  # the whole budget is still there


def test_a_pending_entry_of_a_killed_run_still_counts(tmp_path, wine, monkeypatch):
    ledger = PrivacyLedger.create(tmp_path / "l.json", "wine", epsilon=1.0, delta=1e-6)
    with monkeypatch.context() as patch:
        patch.setattr(PrivacyLedger, "_settle", lambda *a, **k: None)  # the process dies before it settles
        _fit(wine, ledger)
    assert [r["status"] for r in ledger.state()["releases"]] == ["pending"]
    with pytest.raises(LedgerError, match="would pass"):
        _fit(wine, ledger, eps=0.1)


def test_another_data_sets_ledger_is_refused(tmp_path, wine):
    ledger = PrivacyLedger.create(tmp_path / "l.json", "wine", epsilon=10.0, delta=1e-5)
    _fit(wine, ledger)
    with pytest.raises(LedgerError, match="covers data set 'wine', whose records differ"):
        _fit(wine[:100], ledger)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "corrupt \\(not JSON"),
        ('{"format": "something else"}', "not a ddppm ledger"),
        ('{"format": "ddppm-ledger/2", "dataset": "w", "fingerprint": null, "budget": {"epsilon": -1, "delta": 1e-5},'
         ' "releases": []}', "budget .* needs epsilon > 0"),
        ('{"format": "ddppm-ledger/2", "dataset": "w", "fingerprint": null, "budget": {"epsilon": 1, "delta": 1e-5},'
         ' "releases": [{"run": "a"}]}', "release 0 must have exactly"),
        ('{"format": "ddppm-ledger/1", "dataset": "w", "fingerprint": null, "budget": {"epsilon": 1, "delta": 1e-5},'
         ' "releases": []}', "old format 'ddppm-ledger/1'.*ddppm ledger upgrade"),
    ],
)
def test_a_corrupt_ledger_stops_the_fit_before_anything_is_drawn(tmp_path, wine, monkeypatch, text, message):
    path = tmp_path / "l.json"
    path.write_text(text)
    drawn = []
    monkeypatch.setattr(estimator, "draw_release", lambda *a, **k: drawn.append(a))
    with pytest.raises(LedgerError, match=message):
        _fit(wine, path)
    assert drawn == [] and path.read_text() == text


def test_a_ledger_is_never_overwritten_and_a_missing_one_says_how_to_start(tmp_path, wine):
    PrivacyLedger.create(tmp_path / "l.json", "wine", epsilon=1.0, delta=1e-5)
    with pytest.raises(LedgerError, match="never overwritten"):
        PrivacyLedger.create(tmp_path / "l.json", "wine", epsilon=9.0, delta=1e-5)
    with pytest.raises(LedgerError, match="no such file; create one"):
        _fit(wine, tmp_path / "missing.json")
    with pytest.raises(LedgerError, match="is not a ledger"):
        _fit(wine, 3)


def test_a_pure_dp_release_is_recorded_without_mu(tmp_path, wine):
    ledger = PrivacyLedger.create(tmp_path / "l.json", "wine", epsilon=10.0, delta=1e-5)
    PrivatePCA(1, 5.0, 1e-6, WINE_BOUNDS, method="amin", noise="simulation", random_state=0,
               budget=ledger).fit(wine)  # fmt: skip
    assert ledger.state()["releases"][0]["mu"] is None


def test_the_command_line_creates_spends_and_shows_a_ledger(tmp_path, wine, capsys):
    data, bounds, ledger, out = tmp_path / "w.csv", tmp_path / "b.yaml", tmp_path / "w.ledger", tmp_path / "r.json"
    np.savetxt(data, wine, delimiter=",", header=",".join(f"x{i}" for i in range(13)), comments="")
    bounds.write_text("source: test, a wide box\nall_features: [-50, 2000]\n")
    assert main(["ledger", "create", str(ledger), "--dataset", "wine", "--eps", "1", "--delta", "2e-6"]) == 0
    fit = ["fit", str(data), "--bounds", str(bounds), "--k", "2", "--eps", "1", "--delta", "1e-6",
           "--method", "analyze_gauss", "--ledger", str(ledger), "--out", str(out)]  # fmt: skip
    assert main(fit) == 0 and out.is_file()
    out.unlink()
    assert main(fit) == 2 and not out.exists()
    assert "would pass the budget" in capsys.readouterr().err
    assert main(["ledger", "show", str(ledger)]) == 0
    shown = capsys.readouterr().out
    assert "spent (exact composition)" in shown and shown.count("[released]") == 1
    ledger.write_text("garbage")
    assert main(["ledger", "show", str(ledger)]) == 2
    assert "corrupt" in capsys.readouterr().err


def test_every_method_that_declares_no_failure_test_calibrates_without_one():
    """The ledger treats a method as Gaussian from its class flags, before anything is drawn: they must agree with
    what its calibration reports."""
    from ddppm.common_task.raw_records import calibrate_end_to_end
    from ddppm.common_task.task import CommonTask
    from ddppm.methods import common_task_methods

    X = np.random.default_rng(0).normal(size=(200, 4)) / 4
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    task = CommonTask(X, (np.arange(100), np.arange(100, 200)), 1, np.full((2, 2), 0.5), 5)
    options = dict(estimator.METHOD_OPTIONS)
    for name, method in common_task_methods().items():
        if method.privacy_column != "certified" or (method.max_rank is not None and method.max_rank < 1):
            continue
        own, _ = calibrate_end_to_end(method, task, 2.0, 1e-6, None, options)
        assert (own.test_failure > 0) == method.failure_test, name
