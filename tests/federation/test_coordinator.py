"""A federated release (ddppm.federation.coordinator, over the in-process transport) is ``PrivatePCA.fit(X,
parties=...)``'s: with simulation noise and the same seed, the same noise draws, hence the same components, mean,
scale and certificate, up to the order in which the sums are added (the coordinator adds the parties' sums, the
one-process fit sums every row in one pass: 1e-12 here, measured ≤ 2e-14)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from ddppm import PrivatePCA
from ddppm.core.errors import ConfigError
from ddppm.federation.agreement import Agreement
from ddppm.federation.coordinator import InProcess, coordinate
from ddppm.federation.party import Party
from ddppm.federation.plan import Refused
from tests.federation.conftest import BOUNDS, SIZES, labels, split

CASES = [
    ("conventional", "local", True),
    ("conventional", "local", "center"),
    ("conventional", "local", False),
    ("cape", "secure_aggregation", True),
    ("cape", "secure_aggregation", "center"),
    ("ppm_decentralised", "secure_aggregation", True),
    ("balcan_decentralised", "local", True),
    ("balcan_decentralised", "local", False),
    ("fpca", "local", True),
    ("ddppm_certified", "local", True),
]


def _parties(X, agreement):
    return [Party(rows, j, agreement) for j, rows in enumerate(split(X, agreement.sizes))]


@pytest.mark.parametrize(("method", "trust", "standardize"), CASES)
@pytest.mark.parametrize("eps", [1.0, 20.0])
def test_the_federated_release_is_the_one_process_fit(wine, method, trust, standardize, eps):
    one = PrivatePCA(2, eps, 1e-6, BOUNDS, trust=trust, method=method, noise="simulation", random_state=7,
                     standardize=standardize).fit(wine, parties=labels())  # fmt: skip
    agreement = Agreement(2, eps, 1e-6, BOUNDS, SIZES, method, trust=trust, noise="simulation", seed=7,
                          standardize=standardize)  # fmt: skip
    federated = coordinate(InProcess(_parties(wine, agreement)), agreement, wine.shape[1])
    np.testing.assert_allclose(federated.components, one.components_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(federated.mean, one.mean_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(federated.scale, one.scale_, rtol=1e-12)
    ours, theirs = federated.certificate.to_dict(), one.privacy_.to_dict()
    if method == "ddppm_certified":  # the same δ, for an observer that now includes the relaying coordinator
        assert "the coordinator, who relays every message" in ours.pop("observer")
        theirs.pop("observer")
    assert ours == theirs


def test_the_in_process_sum_adds_the_replies_in_the_parties_order():
    class Fixed:
        def __init__(self, value):
            self.value = value

        def answer(self, step, public):
            return np.array([self.value])

    transport = InProcess([Fixed(1e16), Fixed(1.0), Fixed(-1e16)])
    assert transport.sum("sums", {})[0] == 0.0  # (1e16 + 1) − 1e16 in floating point: the order is kept


def test_with_secure_noise_the_release_differs_from_the_simulation_but_is_certified_alike(wine):
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional", noise="secure", seed=7)
    first = coordinate(InProcess(_parties(wine, agreement)), agreement, wine.shape[1])
    again = coordinate(InProcess(_parties(wine, agreement)), agreement, wine.shape[1])
    assert not np.allclose(first.mean, again.mean)  # each party's noise is its own, never the seed's stream
    assert first.certificate.delta <= 1e-6 and first.certificate.noise == again.certificate.noise
    one = PrivatePCA(2, 5.0, 1e-6, BOUNDS, trust="local", method="conventional", random_state=7).fit(
        wine, parties=labels())
    # the same promise; which features' statistics sit on a bound depends on the draws (post-processing)
    assert replace(first.certificate, statistics={}) == replace(one.privacy_, statistics={})


def test_cape_with_secure_noise_needs_secure_aggregation(wine):
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "cape", trust="secure_aggregation", noise="secure")
    with pytest.raises(ConfigError, match="needs secure aggregation"):
        coordinate(InProcess(_parties(wine, agreement)), agreement, wine.shape[1])
    secure = coordinate(InProcess(_parties(wine, agreement), secure=True), agreement, wine.shape[1])
    assert secure.components.shape == (2, wine.shape[1])


def test_a_method_without_a_protocol_is_refused_with_those_that_run(wine):
    agreement = Agreement(1, 5.0, 1e-6, BOUNDS, SIZES, "ldppca_gaussian", noise="simulation")
    served = (r"\['balcan_decentralised', 'cape', 'conventional', 'ddppm_certified', 'fpca', 'ldp', 'ldp_analytic', "
              r"'ppm_decentralised'\]")
    with pytest.raises(ConfigError, match=r"no federated protocol yet.*" + served):
        coordinate(InProcess(_parties(wine, agreement)), agreement, wine.shape[1])


def test_a_party_answers_nothing_to_another_agreement(wine):
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "conventional", noise="simulation")
    other = Agreement(2, 50.0, 1e-6, BOUNDS, SIZES, "conventional", noise="simulation")
    party = Party(split(wine)[0], 0, agreement)
    with pytest.raises(Refused, match="^refused: agreement$"):  # the refusal's word alone reaches the coordinator
        party.answer("sums", {"agreement": other.digest(), "lower": None, "upper": None})
    with pytest.raises(ConfigError, match="holds 60 rows, the agreement says 58"):
        Party(split(wine)[0], 2, agreement)
    with pytest.raises(ConfigError, match="needs trust 'central', more than trust 'local' grants"):
        coordinate(InProcess([]), Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "analyze_gauss"), wine.shape[1])
    with pytest.raises(ConfigError, match="2 parties answered, the agreement has 3"):
        coordinate(InProcess(_parties(wine, agreement)[:2]), agreement, wine.shape[1])


def test_every_preprocessing_step_runs_across_parties_and_matches(wine):
    """A larger, long-tailed set (n = 12,000), where the private box's rounds and the radius search both run."""
    rng = np.random.default_rng(0)
    factor = rng.lognormal(size=(12_000, 1))
    X = np.minimum(factor * rng.lognormal(size=(1, 6)) + rng.lognormal(size=(12_000, 6)), 400.0)
    sizes = (5_000, 4_000, 3_000)
    bounds = {"source": "test: counts capped at 400", "all_features": [0.0, 400.0]}
    one = PrivatePCA(2, 5.0, 1e-6, bounds, trust="local", method="conventional", noise="simulation",
                     random_state=1).fit(X, parties=labels(sizes))  # fmt: skip
    agreement = Agreement(2, 5.0, 1e-6, bounds, sizes, "conventional", noise="simulation", seed=1)
    steps = []

    class Watching(InProcess):
        def sum(self, step, public):
            steps.append(step)
            return super().sum(step, public)

    federated = coordinate(Watching(_parties(X, agreement)), agreement, X.shape[1])
    assert steps.count("box_counts") >= 1 and steps[-3:] == ["sums", "norm_counts", "method"]
    np.testing.assert_allclose(federated.components, one.components_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(federated.scale, one.scale_, rtol=1e-10)
    assert federated.certificate.to_dict() == one.privacy_.to_dict()


def test_each_party_charges_its_own_ledger_before_its_first_reply(wine, tmp_path):
    from ddppm.federation.coordinator import PartyFailed
    from ddppm.release.ledger import PrivacyLedger

    agreement = Agreement(2, 1.0, 1e-6, BOUNDS, SIZES, "conventional", noise="simulation")
    ledgers = [PrivacyLedger.create(tmp_path / f"party{j}.json", f"party {j}", 1.0, 1e-6) for j in range(3)]
    parties = [Party(rows, j, agreement, ledger=ledgers[j]) for j, rows in enumerate(split(wine))]
    coordinate(InProcess(parties), agreement, wine.shape[1])
    assert [len(ledger.state()["releases"]) for ledger in ledgers] == [1, 1, 1]
    again = [Party(rows, j, agreement, ledger=ledgers[j]) for j, rows in enumerate(split(wine))]
    with pytest.raises(PartyFailed, match=r"party 0 failed.*\(Refused: refused: budget\)") as refused:
        coordinate(InProcess(again), agreement, wine.shape[1])
    assert "would pass the budget of 'party 0'" in refused.value.__cause__.detail  # for the party's own log
    assert [len(ledger.state()["releases"]) for ledger in ledgers] == [1, 1, 1]


class Restarting(InProcess):
    """A party rebuilt for every step from its rows, the agreement and the state it left (as Flower's ClientApp
    process per message is)."""

    def __init__(self, blocks, agreement):
        super().__init__([None] * len(blocks))
        self.blocks, self.agreement, self.states = blocks, agreement, [None] * len(blocks)

    def each(self, step, public):
        replies = []
        for j, rows in enumerate(self.blocks):
            party = Party(rows, j, self.agreement, state=self.states[j])
            replies.append(party.answer(step, public))
            self.states[j] = json.loads(json.dumps(party.state))  # what Flower's context keeps: JSON-ready
        return replies

    def sum(self, step, public):
        replies = self.each(step, public)
        total = replies[0]
        for reply in replies[1:]:
            total = total + reply
        return total


@pytest.mark.parametrize("method", ["conventional", "ppm_decentralised", "cape", "fpca", "ddppm_certified"])
def test_a_party_rebuilt_for_every_step_answers_bit_for_bit_as_one_kept_alive(method):
    rng = np.random.default_rng(2)
    X = np.minimum(rng.lognormal(size=(9_000, 1)) * rng.lognormal(size=(1, 5)) + rng.lognormal(size=(9_000, 5)), 90)
    sizes = (3_000, 3_000, 3_000)
    bounds = {"source": "test: capped at 90", "all_features": [0.0, 90.0]}
    trust = "secure_aggregation" if method in ("cape", "ppm_decentralised") else "local"
    agreement = Agreement(2, 5.0, 1e-6, bounds, sizes, method, trust=trust, noise="simulation", seed=5)
    alive = coordinate(InProcess(_parties(X, agreement)), agreement, 5)
    rebuilt = coordinate(Restarting(split(X, sizes), agreement), agreement, 5)
    np.testing.assert_array_equal(rebuilt.components, alive.components)
    np.testing.assert_array_equal(rebuilt.mean, alive.mean)


def test_a_party_that_dies_mid_run_is_named_nothing_is_released_and_the_others_ledgers_keep_their_spend(wine,
                                                                                                       tmp_path):
    from ddppm.federation.coordinator import PartyFailed
    from ddppm.release.ledger import PrivacyLedger

    agreement = Agreement(2, 1.0, 1e-6, BOUNDS, SIZES, "conventional", noise="simulation")
    ledgers = [PrivacyLedger.create(tmp_path / f"p{j}.json", f"party {j}", 1.0, 1e-6) for j in range(3)]
    parties = [Party(rows, j, agreement, ledger=ledgers[j]) for j, rows in enumerate(split(wine))]

    def dies(step, public):
        raise ConnectionError("connection reset by peer")

    parties[2].answer = dies
    with pytest.raises(PartyFailed, match=r"party 2 failed at step 'sums' \(ConnectionError: connection reset.*"
                                          r"nothing is released"):  # fmt: skip
        coordinate(InProcess(parties), agreement, wine.shape[1])
    assert [len(ledger.state()["releases"]) for ledger in ledgers] == [1, 1, 0]  # 0 and 1 had sent their sums
    again = [Party(rows, j, agreement, ledger=ledgers[j]) for j, rows in enumerate(split(wine))]
    with pytest.raises(PartyFailed, match=r"party 0 failed.*refused: budget") as refused:
        coordinate(InProcess(again), agreement, wine.shape[1])  # a rerun needs the budget again, and says so
    assert refused.value.__cause__.kind == "budget" and "would pass the budget" in refused.value.__cause__.detail


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (lambda X: np.where(np.arange(X.size).reshape(X.shape) == 5, np.nan, X), "finite"),
        (lambda X: X[:, :12], "13 features|bounds|features"),
        (lambda X: X[:59], "holds 59 rows, the agreement says 60"),
    ],
)
def test_a_party_with_bad_data_refuses_before_it_sends_anything(wine, rows, message):
    agreement = Agreement(2, 1.0, 1e-6, {"source": "test", "features": [[-50.0, 2000.0]] * 13}, SIZES,
                          "conventional", noise="simulation")  # fmt: skip
    blocks = split(wine)
    with pytest.raises(Exception, match=message):
        Party(rows(blocks[0]), 0, agreement)


@pytest.mark.parametrize("method", ["ldp_analytic", "ldp"])
def test_wang_and_xus_local_release_across_parties_is_the_one_process_fit_where_both_draw_every_row(method):
    """Below n = 2d the one-process fit draws every row's noise, as the parties do (above it draws the Gram in law:
    the two then agree in law only)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(24, 13)) * np.arange(1, 14)
    sizes = (8, 8, 8)
    bounds = {"source": "test: a wide box", "all_features": [-60.0, 60.0]}
    one = PrivatePCA(2, 0.5, 1e-6, bounds, trust="local", method=method, noise="simulation",
                     random_state=2).fit(X, parties=labels(sizes))  # fmt: skip
    agreement = Agreement(2, 0.5, 1e-6, bounds, sizes, method, noise="simulation", seed=2)
    federated = coordinate(InProcess(_parties(X, agreement)), agreement, 13)
    np.testing.assert_allclose(federated.components, one.components_, rtol=0, atol=1e-10)
    assert federated.certificate.to_dict() == one.privacy_.to_dict()
