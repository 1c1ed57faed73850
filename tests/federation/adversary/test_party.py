"""A coordinator that breaks the protocol, against one party in this process (docs/federation.md, "Threat model"):
it re-asks steps, asks steps outside the plan, sends crafted query blocks and crafted released statistics, loops
on refusals to burn the budget, and replays a run. Each attack must end refused with a word of the fixed
vocabulary, nothing beyond the plan's releases leaving the party, and its ledger charged at most once for the run.

The honest messages come from a recorded honest run (:class:`Recording`); each attack edits one of them.
"""

from __future__ import annotations

import numpy as np
import pytest

from ddppm.federation.agreement import Agreement
from ddppm.federation.coordinator import InProcess, coordinate
from ddppm.federation.party import Party
from ddppm.federation.plan import REFUSALS, Refused, plan_steps
from ddppm.federation.public import PublicRelease
from ddppm.release.ledger import PrivacyLedger
from tests.federation.conftest import BOUNDS, SIZES, split

LONG_TAILED_SIZES = (5_000, 4_000, 3_000)
LONG_TAILED_BOUNDS = {"source": "test: counts capped at 400", "all_features": [0.0, 400.0]}


@pytest.fixture(scope="module")
def long_tailed() -> np.ndarray:
    """12,000 long-tailed records: the private box's rounds and the radius search both run on them."""
    rng = np.random.default_rng(0)
    factor = rng.lognormal(size=(12_000, 1))
    return np.minimum(factor * rng.lognormal(size=(1, 6)) + rng.lognormal(size=(12_000, 6)), 400.0)


class Recording(InProcess):
    """An honest coordinator's transport that records every message it sends, in order."""

    def __init__(self, parties, secure=False) -> None:
        super().__init__(parties, secure)
        self.sent: list[tuple[str, dict]] = []

    def _replies(self, step, public):
        self.sent.append((step, {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in public.items()}))
        return super()._replies(step, public)


def honest_transcript(X: np.ndarray, agreement: Agreement) -> list[tuple[str, dict]]:
    parties = [Party(rows, j, agreement) for j, rows in enumerate(split(X, agreement.sizes))]
    transport = Recording(parties, secure=agreement.trust == "secure_aggregation")
    coordinate(transport, agreement, X.shape[1])
    return transport.sent


def refused(party: Party, step: str, message: dict, kind: str = "protocol") -> Refused:
    with pytest.raises(Refused) as caught:
        party.answer(step, message)
    assert str(caught.value) == f"refused: {kind}" and caught.value.kind in REFUSALS
    return caught.value


def wine_agreement(method: str = "conventional", **more) -> Agreement:
    trust = "secure_aggregation" if method in ("cape", "ppm_decentralised") else "local"
    return Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, method, trust=trust, seed=3, **more)


def test_the_honest_coordinator_follows_the_public_plan_step_for_step(wine, long_tailed):
    """The plan the parties enforce is the one the coordinator runs (and with it, the one-process fit's route)."""
    for X, agreement in [(wine, wine_agreement("ppm_decentralised")), (wine, wine_agreement("ddppm_certified")),
                         (long_tailed, Agreement(2, 5.0, 1e-6, LONG_TAILED_BOUNDS, LONG_TAILED_SIZES,
                                                 "conventional", seed=1))]:  # fmt: skip
        sent = [step for step, _ in honest_transcript(X, agreement)]
        planned = [s.name for s in plan_steps(PublicRelease(agreement, X.shape[1]))]
        assert sent == [s for s in planned if s in sent] and len(sent) >= len(planned) - 1
    assert "norm_counts" in sent and sent.count("box_counts") >= 1


def test_a_step_is_answered_once_however_often_it_is_asked(wine, tmp_path):
    """Before: 400 re-asked ``conventional`` replies averaged to within 2.9 of the party's Gram (one reply: 42),
    for one ledger entry. Now the second ask is refused and the ledger holds the run once."""
    agreement = wine_agreement("conventional")
    ledger = PrivacyLedger.create(tmp_path / "ledger.json", "party 0", 50.0, 1e-3)
    party = Party(split(wine)[0], 0, agreement, ledger=ledger)
    transcript = honest_transcript(wine, agreement)
    for step, message in transcript:
        party.answer(step, message)
    step, message = transcript[-1]
    assert step == "method"
    for _ in range(400):
        refused(party, step, message)
    for step, message in transcript:  # the whole run again, from its start
        refused(party, step, message)
    assert len(PrivacyLedger(tmp_path / "ledger.json").summary()["releases"]) == 1


def test_steps_outside_the_plan_are_refused(wine):
    """Before: ``method:100`` was answered when L = 10 was agreed, and ``box_counts`` 50 times when 3 rounds were."""
    agreement = wine_agreement("ppm_decentralised")
    transcript = honest_transcript(wine, agreement)
    steps = [step for step, _ in transcript]
    assert steps[-1] == "method:9" and steps.count("box_counts") == 3  # L = 10 iterations, 3 box rounds
    at = {s: i for i, s in enumerate(steps)}
    party = Party(split(wine)[0], 0, agreement)
    refused(party, "method:0", transcript[at["method:0"]][1])  # before the preprocessing
    refused(party, "sums", transcript[at["sums"]][1])  # before the box rounds
    refused(party, "gram", transcript[0][1])  # no such step
    refused(party, 7, transcript[0][1])  # not even a name
    for step, message in transcript[: at["method:1"] + 1]:
        party.answer(step, message)
    refused(party, "box_counts", transcript[0][1])  # a fourth box round, late
    refused(party, "method:100", transcript[at["method:2"]][1])
    refused(party, "method:3", transcript[at["method:3"]][1])  # skipping method:2
    for step, message in transcript[at["method:2"] :]:
        party.answer(step, message)
    refused(party, "method:10", transcript[-1][1])  # past the last
    refused(party, "sums", transcript[at["sums"]][1])


def test_extra_box_rounds_and_boxes_outside_the_previous_round_are_refused(long_tailed):
    agreement = Agreement(2, 5.0, 1e-6, LONG_TAILED_BOUNDS, LONG_TAILED_SIZES, "conventional", seed=1)
    transcript = honest_transcript(long_tailed, agreement)
    rounds = [m for s, m in transcript if s == "box_counts"]
    party = Party(split(long_tailed, LONG_TAILED_SIZES)[0], 0, agreement)
    wide = {**rounds[0], "lower": rounds[0]["lower"] * 2, "upper": rounds[0]["upper"] * 2}
    refused(party, "box_counts", wide)  # the first round asks about the public box, nothing else
    party.answer("box_counts", rounds[0])
    if len(rounds) > 1:
        outside = {**rounds[1], "lower": rounds[0]["lower"] - 1e-3}
        refused(party, "box_counts", outside)
        sliver = {**rounds[1], "upper": rounds[1]["lower"] + 1e-12}  # narrower than one bin of the round before
        refused(party, "box_counts", sliver)
    for step, message in transcript[1:]:
        party.answer(step, message)
    refused(party, "box_counts", rounds[0])  # 50 rounds when the plan has a few: the first extra is refused


@pytest.mark.parametrize("method", ["ppm_decentralised", "balcan_decentralised"])
def test_crafted_query_blocks_are_refused(wine, method):
    """Before: with ``X = 10⁶·I`` one power-method reply returned the party's whole Gram to 5·10⁻⁵ (noise 22 per
    entry). Now a block must have orthonormal columns (what the sensitivity assumes) and the first must be the
    public start from the agreement's seed."""
    agreement = wine_agreement(method)
    transcript = honest_transcript(wine, agreement)
    at = {s: i for i, (s, _) in enumerate(transcript)}
    before, first, second = transcript[: at["method:0"]], transcript[at["method:0"]], transcript[at["method:1"]]
    d, k = first[1]["X"].shape
    attacks = {
        "scaled identity": 1e6 * np.eye(d)[:, :k],
        "scaled start": 2.0 * first[1]["X"],
        "wrong shape": np.eye(d),
        "not finite": np.where(np.eye(d)[:, :k] > 0, np.nan, 0.0),
        "orthonormal but not the public start": np.eye(d)[:, :k],
    }
    for name, X in attacks.items():
        party = Party(split(wine)[0], 0, agreement)
        for honest in before:
            party.answer(*honest)
        detail = refused(party, "method:0", {**first[1], "X": X}).detail
        assert "X" in detail, name
    party = Party(split(wine)[0], 0, agreement)
    for honest in [*before, first]:
        party.answer(*honest)
    refused(party, "method:1", {**second[1], "X": 1e6 * np.eye(d)[:, :k]})
    party = Party(split(wine)[0], 0, agreement)  # later rounds: any orthonormal block is covered by the accounting
    for honest in [*before, first]:
        party.answer(*honest)
    adaptive = np.eye(d)[:, :k]  # chosen by the coordinator, orthonormal: a Gaussian release of sensitivity Δ
    assert party.answer("method:1", {**second[1], "X": adaptive}).shape == (d, k)


def test_crafted_bases_are_refused_by_a_ddppm_agent(wine):
    agreement = wine_agreement("ddppm_certified")
    transcript = honest_transcript(wine, agreement)
    at = {s: i for i, (s, _) in enumerate(transcript)}
    before, first = transcript[: at["method:0"]], transcript[at["method:0"]]
    for B in [1e6 * first[1]["B"], first[1]["B"][:, :, :1], np.roll(first[1]["B"], 1, axis=1)]:
        party = Party(split(wine)[0], 0, agreement)
        for honest in before:
            party.answer(*honest)
        refused(party, "method:0", {**first[1], "B": B})


def _statistics_attacks(message: dict, floor: float) -> dict[str, dict]:
    d = message["mean"].size
    return {
        "mean far outside the box": {**message, "mean": np.full(d, 1e6)},
        "mean not finite": {**message, "mean": np.full(d, np.nan)},
        "mean of the wrong size": {**message, "mean": message["mean"][:-1]},
        "variance below its public floor": {**message, "variance": np.full(d, floor / 1e6)},
        "variance of zero": {**message, "variance": np.zeros(d)},
        "variance above the squares' largest value": {**message, "variance": np.full(d, 1e6)},
        "an unknown key": {**message, "rows": np.ones(3)},
    }


def test_released_statistics_outside_their_public_range_are_refused_before_any_charge(long_tailed, tmp_path):
    """Before: crafted means, variances and radii made the secure sampler fail only when one row's value passed a
    threshold, and the error reached the coordinator: 60 probes recovered one row's extreme value to 6·10⁻¹⁶, for
    one ledger entry. Now every released value is checked against the public plan before the answer, the refusal
    is the same word whatever the rows, and a refused message costs nothing."""
    agreement = Agreement(2, 5.0, 1e-6, LONG_TAILED_BOUNDS, LONG_TAILED_SIZES, "conventional", seed=1)
    transcript = honest_transcript(long_tailed, agreement)
    at = {s: i for i, (s, _) in enumerate(transcript)}
    norm_counts, method = transcript[at["norm_counts"]], transcript[at["method"]]
    from ddppm.federation.plan import variance_floor

    floor = variance_floor(PublicRelease(agreement, long_tailed.shape[1]))
    rows = split(long_tailed, LONG_TAILED_SIZES)[0]
    other_rows = rows[::-1] * 0.5  # another party 0: the refusals must not depend on the rows
    for step_index, (step, message) in [(at["norm_counts"], norm_counts), (at["method"], method)]:
        for name, crafted in _statistics_attacks(message, floor).items():
            texts = []
            for own in (rows, other_rows):
                ledger = PrivacyLedger.create(tmp_path / f"{step}-{name}-{len(texts)}.json", "party 0", 50.0, 1e-3)
                party = Party(own, 0, agreement, ledger=ledger)
                for honest in transcript[: at["sums"]]:
                    party.answer(*honest)
                charged = len(ledger.summary()["releases"])  # the box rounds charged the run once
                party.answer(*transcript[at["sums"]])
                for honest in transcript[at["sums"] + 1 : step_index]:
                    party.answer(*honest)
                texts.append(str(refused(party, step, crafted)))
                assert len(ledger.summary()["releases"]) == charged
            assert texts == ["refused: protocol"] * 2, name


def test_released_values_cannot_change_mid_run(long_tailed):
    agreement = Agreement(2, 5.0, 1e-6, LONG_TAILED_BOUNDS, LONG_TAILED_SIZES, "conventional", seed=1)
    transcript = honest_transcript(long_tailed, agreement)
    at = {s: i for i, (s, _) in enumerate(transcript)}
    method = transcript[at["method"]][1]
    from ddppm.federation.plan import radius_candidates

    radii = radius_candidates(PublicRelease(agreement, long_tailed.shape[1]), method["mean"], method["variance"])
    other_radius = float(next(r for r in radii if r != method["radius"]))
    attacks = {
        "another box after the sums": {**method, "upper": method["upper"] * 0.99},
        "another mean than norm_counts'": {**method, "mean": method["mean"] * (1 + 1e-12)},
        "a radius off the public grid": {**method, "radius": method["radius"] * 1.001},
        "another point of the grid is fine only if it was released: it was not": {**method, "radius": other_radius},
    }
    for name, crafted in attacks.items():
        party = Party(split(long_tailed, LONG_TAILED_SIZES)[0], 0, agreement)
        for honest in transcript[: at["method"]]:
            party.answer(*honest)
        if "grid is fine" in name:  # any grid point is admissible once: choose_radius may return each
            assert party.answer("method", crafted).shape == (6, 6)
            continue
        refused(party, "method", crafted)
    crafted_radii = {**transcript[at["norm_counts"]][1], "radii": transcript[at["norm_counts"]][1]["radii"] * 2}
    party = Party(split(long_tailed, LONG_TAILED_SIZES)[0], 0, agreement)
    for honest in transcript[: at["norm_counts"]]:
        party.answer(*honest)
    refused(party, "norm_counts", crafted_radii)


def test_a_refusal_loop_burns_no_budget_and_an_honest_run_follows(wine, tmp_path):
    """Before: 12 malformed messages charged the ledger 9 times, nothing was released, and later honest runs were
    refused, with the ledger's path and spend in the refusal. Now a refused message costs nothing."""
    agreement = wine_agreement("conventional")
    ledger = PrivacyLedger.create(tmp_path / "ledger.json", "party 0", 5.0, 1e-6)  # one run's budget exactly
    party = Party(split(wine)[0], 0, agreement, ledger=ledger)
    transcript = honest_transcript(wine, agreement)
    first = transcript[0][1]
    assert transcript[0][0] == "box_counts"
    malformed = [("box_counts", {**first, "lower": np.zeros(13)}), ("method", first), ("sums", first), ("", first),
                 ("box_counts", {"agreement": "x"}), ("box_counts", {**first, "extra": 1.0}), ("norm_counts", first),
                 ("box_counts", "not a mapping"), ("method:0", first), ("box_counts", {**first, "upper": np.ones(13)}),
                 ("box_counts", {}), ("BOX_COUNTS", first)]  # fmt: skip
    for step, message in malformed:
        with pytest.raises(Refused) as caught:
            party.answer(step, message)
        assert str(caught.value) in ("refused: protocol", "refused: agreement")
        assert str(tmp_path) not in str(caught.value)
    assert PrivacyLedger(tmp_path / "ledger.json").summary()["releases"] == []
    for step, message in transcript:
        party.answer(step, message)
    assert len(PrivacyLedger(tmp_path / "ledger.json").summary()["releases"]) == 1


def test_a_spent_budget_is_refused_with_one_word(wine, tmp_path):
    agreement = wine_agreement("conventional")
    ledger = PrivacyLedger.create(tmp_path / "ledger.json", "party 0", 1.0, 1e-6)
    transcript = honest_transcript(wine, agreement)
    caught = refused(Party(split(wine)[0], 0, agreement, ledger=ledger), *transcript[0], kind="budget")
    assert "would pass the budget" in caught.detail and str(tmp_path) not in str(caught)


def test_a_run_is_charged_and_answered_once_even_by_a_party_that_lost_its_state(wine, tmp_path):
    """A party rebuilt for the same run without its saved position (a restarted SuperNode, a coordinator that
    drops the state) finds the run in its ledger and answers nothing: it cannot be made to start the run again."""
    agreement = wine_agreement("conventional")
    ledger = PrivacyLedger.create(tmp_path / "ledger.json", "party 0", 50.0, 1e-3)
    transcript = honest_transcript(wine, agreement)
    first = Party(split(wine)[0], 0, agreement, ledger=ledger, run="flower-run:17")
    first.answer(*transcript[0])
    again = Party(split(wine)[0], 0, agreement, ledger=ledger, run="flower-run:17")
    refused(again, *transcript[0])
    assert len(PrivacyLedger(tmp_path / "ledger.json").summary()["releases"]) == 1
    resumed = Party(split(wine)[0], 0, agreement, ledger=ledger, run="flower-run:17", state=first.state)
    assert resumed.answer(*transcript[1]).size == 13 * 2  # with its state, the run goes on: 2 bins per feature
    refused(resumed, *transcript[1])


def test_a_state_that_lost_a_step_its_journal_recorded_is_refused(wine, tmp_path):
    """A review's finding: Flower saves a party's state only after its reply has left, so a crash in between (or two
    processes from one saved state) reopened the step: 20 answers to ``method`` for one ledger entry cut the noise
    from 1.63 to 0.385 when averaged. The journal beside the ledger records each step before its answer."""
    from ddppm.federation.journal import StepJournal

    agreement = wine_agreement("conventional")
    ledger = PrivacyLedger.create(tmp_path / "ledger.json", "party 0", 50.0, 1e-3)
    transcript = honest_transcript(wine, agreement)
    party = Party(split(wine)[0], 0, agreement, ledger=ledger, run="flower-run:5")
    for step, message in transcript[:-1]:
        party.answer(step, message)
    before_last = party.state
    party.answer(*transcript[-1])  # its reply leaves; the state saved after it is lost
    assert StepJournal(tmp_path / "ledger.json").position("flower-run:5") == len(transcript)
    stale = Party(split(wine)[0], 0, agreement, ledger=ledger, run="flower-run:5", state=before_last)
    for _ in range(20):
        refused(stale, *transcript[-1])
    assert oct((tmp_path / ".ledger.json.steps.json").stat().st_mode & 0o777) == "0o600"
    assert len(PrivacyLedger(tmp_path / "ledger.json").summary()["releases"]) == 1


def test_an_unreadable_journal_is_refused_as_budget_before_anything_is_drawn(wine, tmp_path):
    agreement = wine_agreement("conventional")
    ledger = PrivacyLedger.create(tmp_path / "ledger.json", "party 0", 50.0, 1e-3)
    (tmp_path / ".ledger.json.steps.json").write_text("not a journal")
    transcript = honest_transcript(wine, agreement)
    caught = refused(Party(split(wine)[0], 0, agreement, ledger=ledger), *transcript[0], kind="budget")
    assert "journal" in caught.detail
    assert PrivacyLedger(tmp_path / "ledger.json").summary()["releases"] == []
