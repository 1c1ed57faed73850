"""Rows read a block at a time (ddppm.release.stream, PrivatePCA.fit_stream): the streamed release is the in-memory
fit's (simulation noise, the same seed: the same draws; the sums differ in their last bits only, 1e-12 here) for
every method that streams, from every kind of source; the passes are those documented; a method that needs the
rows, and bad blocks, are refused before any noise is drawn."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_wine

from ddppm import PrivatePCA
from ddppm.core.errors import ConfigError, DataError
from ddppm.data.public_prep import public_bounds
from ddppm.methods import common_task_methods
from ddppm.release.ledger import PrivacyLedger, records_fingerprint
from ddppm.release.stream import row_blocks, streaming_methods

WINE = load_wine().data
_B = public_bounds("wine", WINE.shape[1])
BOUNDS = {"kind": _B.kind, "source": _B.source, "features": np.column_stack([_B.lower, _B.upper]).tolist()}
TRUST = {"central": "central", "local": "local", "secure_aggregation": "secure_aggregation", "gossip": "local"}


def _pair(method: str, standardize, source, eps: float = 5.0) -> tuple[PrivatePCA, PrivatePCA]:
    trust = TRUST[common_task_methods()[method].trust_model]
    settings = dict(trust=trust, method=method, noise="simulation", random_state=11, standardize=standardize)
    one = PrivatePCA(2, eps, 1e-6, BOUNDS, **settings).fit(WINE)
    return one, PrivatePCA(2, eps, 1e-6, BOUNDS, **settings).fit_stream(source)


def _same(one: PrivatePCA, streamed: PrivatePCA) -> None:
    np.testing.assert_allclose(streamed.components_, one.components_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(streamed.mean_, one.mean_, rtol=1e-12)
    np.testing.assert_allclose(streamed.scale_, one.scale_, rtol=1e-12)
    assert streamed.privacy_.to_dict() == one.privacy_.to_dict()


def test_the_streaming_methods_are_those_of_a_second_moment():
    assert set(streaming_methods()) == {"analyze_gauss", "balcan_decentralised", "cape", "conventional",
                                        "ddppm_certified", "fpca", "ppm_decentralised", "ppm_theirs_sqrt2"}  # fmt: skip


@pytest.mark.parametrize("method", streaming_methods())
@pytest.mark.parametrize("standardize", [True, "center", False])
def test_the_streamed_release_is_the_in_memory_fit(method, standardize):
    blocks = [WINE[i : i + 37] for i in range(0, len(WINE), 37)]  # uneven blocks
    _same(*_pair(method, standardize, blocks))


@pytest.mark.parametrize("eps", [0.5, 20.0])  # no box nor radius; three rounds and a radius
def test_each_statistic_is_one_pass_and_the_passes_are_counted(eps):
    calls = []

    def blocks():
        calls.append(1)
        return iter([WINE[:100], WINE[100:]])

    one, streamed = _pair("analyze_gauss", True, blocks, eps)
    _same(one, streamed)
    stages = [(r["stage"], r["count"]) for r in streamed.privacy_.to_dict()["releases"]]  # every release drawn
    drawn = sum(count for stage, count in stages if "squared" not in stage)  # the squares share the sums' pass
    assert streamed.passes_ == drawn  # one pass per noisy statistic: each box round, sums, norms, XᵀX
    assert len(calls) == 1 + 1 + streamed.passes_  # the count, the clipped values' count, then the statistics


def test_every_source_gives_the_same_release(tmp_path):
    frame = pd.DataFrame(WINE, columns=[f"x{j}" for j in range(WINE.shape[1])])
    frame.to_parquet(tmp_path / "wine.parquet", row_group_size=40)
    frame.to_csv(tmp_path / "wine.csv", index=False)
    folder = tmp_path / "parts"
    folder.mkdir()
    for j, start in enumerate(range(0, len(frame), 60)):
        frame.iloc[start : start + 60].to_parquet(folder / f"part-{j:02d}.parquet")
    sources = [WINE, list(np.array_split(WINE, 4)), lambda: iter(np.array_split(WINE, 7)),
               tmp_path / "wine.parquet", str(folder), tmp_path / "wine.csv"]  # fmt: skip
    one = PrivatePCA(2, 5.0, 1e-6, BOUNDS, noise="simulation", random_state=3, method="analyze_gauss").fit(WINE)
    for source in sources:
        _same(one, PrivatePCA(2, 5.0, 1e-6, BOUNDS, noise="simulation", random_state=3,
                              method="analyze_gauss").fit_stream(source))  # fmt: skip


@pytest.mark.parametrize("method", ["ldp", "dp_pca", "cai_xia_zha"])
def test_a_method_that_needs_the_rows_refuses_before_any_pass(method):
    calls = []

    def blocks():
        calls.append(1)
        return iter([WINE])

    model = PrivatePCA(1, 5.0, 1e-6, BOUNDS, trust="local" if method == "ldp" else "central", method=method,
                       noise="simulation")  # fmt: skip
    with pytest.raises(ConfigError, match="cannot read them a block at a time; methods that stream"):
        model.fit_stream(blocks)
    assert len(calls) == 1 and not hasattr(model, "components_")  # the count only: nothing drawn


@pytest.mark.parametrize(("blocks", "words"), [
    ([WINE[:100], np.where(np.arange(13) == 4, np.nan, WINE[100:])], "block 1 \\(rows from 100\\) holds NaN"),
    ([WINE[:100], WINE[100:, :12]], "block 1 has 12 columns, the first had 13"),
    ([WINE[:100], np.inf * WINE[100:]], "holds NaN, infinite"),
    ([WINE[:, 0]], "is not 2-D"),
])  # fmt: skip
def test_bad_blocks_are_refused_with_the_block_named_and_nothing_released(blocks, words):
    model = PrivatePCA(2, 5.0, 1e-6, BOUNDS, method="analyze_gauss")
    with pytest.raises(DataError, match=words):
        model.fit_stream(lambda: iter(blocks))
    assert not hasattr(model, "components_")


def test_a_bad_file_is_refused_naming_the_column(tmp_path):
    frame = pd.DataFrame(WINE, columns=[f"x{j}" for j in range(WINE.shape[1])])
    holes = frame.astype({"x3": "Float64"})
    holes.loc[150, "x3"] = None
    holes.to_parquet(tmp_path / "holes.parquet")
    with pytest.raises(DataError, match="column 'x3' of holes.parquet has empty values"):
        PrivatePCA(2, 5.0, 1e-6, BOUNDS, method="analyze_gauss").fit_stream(tmp_path / "holes.parquet")
    frame.assign(site="a").to_parquet(tmp_path / "text.parquet")
    with pytest.raises(DataError, match=r"the columns \['site'\] of text.parquet are not numeric"):
        PrivatePCA(2, 5.0, 1e-6, BOUNDS, method="analyze_gauss").fit_stream(tmp_path / "text.parquet")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="holds no Parquet file"):
        PrivatePCA(2, 5.0, 1e-6, BOUNDS).fit_stream(tmp_path / "empty")
    with pytest.raises(ConfigError, match="not a Parquet"):
        (tmp_path / "data.txt").write_text("1,2\n")
        PrivatePCA(2, 5.0, 1e-6, BOUNDS).fit_stream(tmp_path / "data.txt")
    with pytest.raises(ConfigError, match="is not a source of rows"):
        PrivatePCA(2, 5.0, 1e-6, BOUNDS).fit_stream(42)


def test_the_streamed_fingerprint_is_the_records_and_the_ledger_is_shared(tmp_path):
    assert row_blocks(lambda: iter(np.array_split(WINE, 5))).fingerprint() == records_fingerprint(WINE)
    ledger = PrivacyLedger.create(tmp_path / "ledger.json", "wine", 6.0, 1e-5)
    PrivatePCA(2, 2.0, 1e-6, BOUNDS, method="analyze_gauss", budget=ledger).fit_stream(np.array_split(WINE, 3))
    PrivatePCA(2, 2.0, 1e-6, BOUNDS, method="analyze_gauss", budget=ledger).fit(WINE)  # the same data set
    assert len(ledger.state()["releases"]) == 2
    with pytest.raises(Exception, match="would pass the budget"):
        PrivatePCA(2, 6.0, 1e-6, BOUNDS, method="analyze_gauss", budget=ledger).fit_stream(WINE)


def test_a_source_that_changes_between_passes_is_refused(tmp_path):
    """n fixed the calibration and divides the sums: a pass that reads other rows stops the fit (found in review: a
    source losing a row per pass was released, its certificate saying n = 177)."""
    shrinking = [len(WINE)]

    def blocks():
        shrinking[0] -= 1
        return iter([WINE[: shrinking[0] + 1]])

    model = PrivatePCA(2, 5.0, 1e-6, BOUNDS, method="analyze_gauss")
    with pytest.raises(DataError, match="this pass read 177 rows, the first 178"):
        model.fit_stream(blocks)
    assert not hasattr(model, "components_")
    used = iter([WINE])  # a generator, not a function returning a fresh one: the second pass finds it spent
    with pytest.raises(DataError, match="this pass read 0 rows"):
        PrivatePCA(2, 5.0, 1e-6, BOUNDS, method="analyze_gauss").fit_stream(lambda: used)


@pytest.mark.parametrize(("source", "words"), [
    (lambda: None, "not an iterable of blocks"),
    ([WINE, 3.0], "every block of the list must be a 2-D array"),
    (lambda: iter([np.array([["a", "b"]])]), "block 0 is not numeric"),
    (WINE[:1], r"1 row\(s\); a release needs at least 2 records"),
])  # fmt: skip
def test_malformed_python_sources_get_a_data_error(source, words):
    with pytest.raises(DataError, match=words):
        PrivatePCA(2, 5.0, 1e-6, BOUNDS, method="analyze_gauss").fit_stream(source)


def test_every_file_of_a_folder_is_checked_and_a_csv_is_read_as_numbers(tmp_path):
    frame = pd.DataFrame(WINE, columns=[f"x{j}" for j in range(WINE.shape[1])])
    empty = tmp_path / "empty.parquet"
    frame.iloc[:0].to_parquet(empty)
    with pytest.raises(DataError, match="0 row"):
        PrivatePCA(2, 5.0, 1e-6, BOUNDS, method="analyze_gauss").fit_stream(empty)
    folder = tmp_path / "parts"
    folder.mkdir()
    frame.iloc[:100].to_parquet(folder / "a.parquet")
    frame.iloc[100:].assign(x3=pd.Timestamp("2026-01-01")).to_parquet(folder / "b.parquet")  # dates, not numbers
    with pytest.raises(DataError, match=r"the columns \['x3'\] of b.parquet are not numeric"):
        PrivatePCA(2, 5.0, 1e-6, BOUNDS, method="analyze_gauss").fit_stream(folder)
    whole = frame.round(0)  # whole numbers first, a decimal only in the last rows: no guessed integer type
    whole.iloc[-1, 0] = 13.5
    whole.to_csv(tmp_path / "late.csv", index=False, sep=";")  # and a spreadsheet's separator
    expected = PrivatePCA(2, 5.0, 1e-6, BOUNDS, method="analyze_gauss", noise="simulation", random_state=1)
    streamed = PrivatePCA(2, 5.0, 1e-6, BOUNDS, method="analyze_gauss", noise="simulation", random_state=1)
    from ddppm.release.files import file_blocks

    _same(expected.fit(whole.to_numpy()), streamed.fit_stream(file_blocks(tmp_path / "late.csv", batch_rows=16)))
