"""The Flower apps in one process (ddppm.federation.flower and .secure_sum on an in-process Grid that runs the real
ServerApp, ClientApps and SecAgg+ with real crypto): plain sums equal the one-process fit; through secure
aggregation the coordinator receives masked vectors and the sum only, within the quantisation's 10⁻⁹·scale."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ddppm import PrivatePCA
from ddppm.federation.agreement import Agreement
from tests.federation.conftest import BOUNDS, SIZES, labels, split

pytest.importorskip("flwr", reason="the federation extra installs Flower")
from ddppm.federation import secure_sum  # noqa: E402
from ddppm.federation.flower import clientapp, serverapp  # noqa: E402
from tests.federation.inprocess_grid import InProcessGrid, run_inprocess  # noqa: E402


def _run(wine, tmp_path: Path, agreement: Agreement, app=clientapp) -> tuple[dict, InProcessGrid]:
    nodes = {}
    for j, rows in enumerate(split(wine)):
        folder = tmp_path / f"party{j}"
        folder.mkdir()
        pd.DataFrame(rows, columns=[f"x{i}" for i in range(13)]).to_csv(folder / "rows.csv", index=False)
        (folder / "agreement.json").write_text(json.dumps(agreement.to_dict()))
        nodes[100 + j] = {"data-path": str(folder / "rows.csv"), "agreement-path": str(folder / "agreement.json"),
                          "party-index": j, "testing-simulation-noise": True}  # fmt: skip
    (tmp_path / "agreement.json").write_text(json.dumps(agreement.to_dict()))
    out = tmp_path / "release.json"
    grid = run_inprocess(serverapp, app, nodes, {"agreement-path": str(tmp_path / "agreement.json"),
                                                       "out-path": str(out), "timeout": 30.0})  # fmt: skip
    return json.loads(out.read_text()), grid


def _one_process(wine, agreement: Agreement) -> PrivatePCA:
    return PrivatePCA(2, agreement.epsilon, agreement.delta, BOUNDS, trust=agreement.trust, method=agreement.method,
                      noise="simulation", random_state=agreement.seed).fit(wine, parties=labels())  # fmt: skip


@pytest.mark.parametrize("method", ["conventional", "fpca"])
def test_plain_sums_through_the_apps_equal_the_one_process_fit(wine, tmp_path, method):
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, method, noise="simulation", seed=4)
    release, _ = _run(wine, tmp_path, agreement)
    one = _one_process(wine, agreement)
    np.testing.assert_allclose(np.array(release["components"]), one.components_, atol=1e-12)
    assert release["privacy"] == json.loads(json.dumps(one.privacy_.to_dict()))
    sent = release["transport"]["payload_bytes_per_party"]  # at least the sums and the 13 × 13 release (FPCA: 13 × 2)
    assert len(set(sent)) == 1 and sent[0] >= 8 * (2 * 13 + 13 * 2) and release["transport"]["steps"] >= 3


@pytest.mark.parametrize("method", ["cape", "ppm_decentralised"])
def test_through_secure_aggregation_the_coordinator_sees_the_sum_alone(wine, tmp_path, monkeypatch, method, carried):
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, method, trust="secure_aggregation", noise="simulation",
                          seed=4)  # fmt: skip
    seen = carried
    expanded = []  # both sides expand the masks from the whole secret (secure_sum.strong_masks)
    strong = secure_sum.chacha20_masks
    monkeypatch.setattr(secure_sum, "chacha20_masks", lambda *a: expanded.append(1) or strong(*a))
    release, grid = _run(wine, tmp_path, agreement)
    assert expanded and secure_sum._FLOWER_MASKS == {}  # and Flower's expansion is back once the sums are done
    # every party ran its sums behind the pinned mod, and its last one ended at the unmasking
    assert {str(c.state.config_records[secure_sum._PIN_RECORD]["stage"]) for c in grid._ctx.values()} == {"unmask"}
    one = _one_process(wine, agreement)
    # the quantisation moves each sum by ~1e-9 of its scale: the directions by far less than the noise
    np.testing.assert_allclose(np.array(release["components"]), one.components_, atol=1e-5)
    # the mean's unit is the box's half-width·√d (about 3,700 here): 2·scale/2^30 per party becomes ~1e-6
    np.testing.assert_allclose(np.array(release["mean"]), one.mean_, rtol=0, atol=1e-4)
    assert release["privacy"] == json.loads(json.dumps(one.privacy_.to_dict()))
    trained = [m for m in seen if m.metadata.message_type == "train"]
    assert trained and all("fitres.parameters" not in m.content.array_records
                           or len(m.content.array_records["fitres.parameters"]) == 0 for m in trained)  # fmt: skip
    plain = [m for m in seen if m.metadata.message_type == "query"]
    # the only replies in the clear are the hello round's (index, rows, features): public
    assert {m.content.array_records["reply"]["value"].numpy().shape for m in plain} == {(3,)}


def test_a_party_that_dies_during_secure_aggregation_is_named_and_nothing_is_unmasked(wine, tmp_path):
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, "cape", trust="secure_aggregation", noise="simulation")
    dead = []

    def party_app(msg, context):
        if context.node_id == 102 and (dead or msg.metadata.message_type == "train"):
            dead.append(True)  # party 2 dies at its first secure step, and stays dead
            raise ConnectionError("party 2's machine is gone")
        return clientapp(msg, context)

    with pytest.raises(Exception, match="party 2 failed at step 'box_counts'.*machine is gone.*nothing is released"):
        _run(wine, tmp_path, agreement, app=party_app)
    assert "error" in json.loads((tmp_path / "release.json").read_text())


class _Forgetful(dict):
    """A ``flower._LIVE`` that keeps nothing: every message rebuilds its party, as Flower's process per message."""

    def __setitem__(self, key, value) -> None:
        pass


@pytest.mark.parametrize("method", ["conventional", "cape"])
def test_a_party_kept_across_messages_answers_bit_for_bit_as_one_rebuilt_for_each(wine, tmp_path, monkeypatch, method):
    """A warm party's process keeps its party between messages (ddppm.federation.flower._answer): built once per
    node for the hello's checks and once for the run, it releases the very bits of a party rebuilt per message."""
    from ddppm.federation import flower

    trust = "secure_aggregation" if method == "cape" else "local"
    agreement = Agreement(2, 5.0, 1e-6, BOUNDS, SIZES, method, trust=trust, noise="simulation", seed=4)
    built = []
    monkeypatch.setattr(flower, "Party", lambda *a, _party=flower.Party, **k: built.append(a[1]) or _party(*a, **k))
    (tmp_path / "kept").mkdir()
    kept, grid = _run(wine, tmp_path / "kept", agreement)
    assert sorted(built) == [0, 0, 1, 1, 2, 2] and grid.n_messages > 6
    built.clear()
    monkeypatch.setattr(flower, "_LIVE", _Forgetful())
    (tmp_path / "rebuilt").mkdir()
    rebuilt, _ = _run(wine, tmp_path / "rebuilt", agreement)
    assert len(built) == 3 * (1 + rebuilt["transport"]["steps"])  # the hello, then every step rebuilt its party
    if method == "cape":  # SecAgg+'s quantisation rounds at random: equal within it, as with one process
        np.testing.assert_allclose(kept["components"], rebuilt["components"], atol=1e-5)
    else:
        assert kept["components"] == rebuilt["components"] and kept["mean"] == rebuilt["mean"]
    assert kept["privacy"] == rebuilt["privacy"]


def test_the_strong_mask_expansion_is_deterministic_and_not_flowers():
    from flwr.common.secure_aggregation.secaggplus_utils import pseudo_rand_gen

    seed, shapes = bytes(range(32)), [(1,), (3, 4), ()]
    masks = secure_sum.chacha20_masks(seed, 2**40, shapes)
    assert [m.shape for m in masks] == shapes and all(m.dtype == np.int64 for m in masks)
    assert all(np.array_equal(a, b) for a, b in zip(masks, secure_sum.chacha20_masks(seed, 2**40, shapes), strict=True))
    flat = np.concatenate([m.ravel() for m in masks])
    assert not np.array_equal(flat, np.concatenate([m.ravel() for m in pseudo_rand_gen(seed, 2**40, shapes)]))
    # every byte of the seed counts (Flower's folds it to 32 bits: seeds equal after the fold give equal masks)
    folded = bytes(range(4)) * 2 + bytes(24)  # XOR-folds to 0, as bytes(32) does
    assert np.array_equal(pseudo_rand_gen(folded, 2**40, [(8,)])[0], pseudo_rand_gen(bytes(32), 2**40, [(8,)])[0])
    assert not np.array_equal(secure_sum.chacha20_masks(folded, 2**40, [(8,)])[0],
                              secure_sum.chacha20_masks(bytes(32), 2**40, [(8,)])[0])  # fmt: skip
    # the draws fill the shapes in order: the same stream whatever the split
    assert np.array_equal(flat, secure_sum.chacha20_masks(seed, 2**40, [(14,)])[0])


@pytest.mark.parametrize("bound", [2**40, 10**12 + 39, 3 * 2**61])
def test_the_strong_masks_are_uniform_on_the_whole_group(bound):
    """A chi-square test of 2^17 draws (a fixed seed: the test is deterministic), on 64 equal slices of [0, bound) and
    on the residues modulo 64; 3·2^61 rejects a quarter of the words, 10^12 + 39 a few in 10^7, 2^40 none."""
    from scipy.stats import chisquare

    draws = secure_sum.chacha20_masks(b"a fixed seed for the test", bound, [(2**17,)])[0]
    assert draws.min() >= 0 and draws.max() < bound
    slices = np.bincount((draws / bound * 64).astype(int), minlength=64)
    residues = np.bincount(draws % 64, minlength=64)
    assert chisquare(slices).pvalue > 1e-3 and chisquare(residues).pvalue > 1e-3


def test_strong_masks_replace_flowers_expansion_on_both_sides_and_give_it_back():
    import importlib

    party = importlib.import_module("flwr.client.mod.secure_aggregation.secaggplus_mod")
    coordinator = importlib.import_module("flwr.server.workflow.secure_aggregation.secaggplus_workflow")
    flowers = party.pseudo_rand_gen
    with secure_sum.strong_masks():
        with secure_sum.strong_masks():  # the coordinator's block around its parties' in one process
            assert party.pseudo_rand_gen is coordinator.pseudo_rand_gen is secure_sum.chacha20_masks
        assert party.pseudo_rand_gen is coordinator.pseudo_rand_gen is secure_sum.chacha20_masks
    assert party.pseudo_rand_gen is coordinator.pseudo_rand_gen is flowers
