"""Tests of ddppm.data: loaders, synthetic generators, normalisation, unit-ball check, downloads."""

from __future__ import annotations

import functools
import hashlib
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ddppm.core.errors import ConfigError, DataError
from ddppm.data import (
    DATASETS,
    NORMALIZATIONS,
    PAPER_SHAPES,
    SHAPES,
    Dataset,
    ami_synthetic,
    check_unit_ball,
    download,
    load_dataset,
    matrix_sha256,
    normalize,
    read_numeric_table,
    sbm_graph_signal,
    sbm_graph_signal_parts,
    spiked_synthetic,
)


@pytest.fixture(scope="module")
def datasets() -> dict[str, Dataset]:
    return {name: load_dataset(name) for name in DATASETS}


# ------------------------------------------------------------------------------------------- loaders


@pytest.mark.parametrize(
    ("name", "shape"), [("diabetes", (442, 10)), ("breast_cancer", (569, 30)), ("wine", (178, 13))]
)
def test_sklearn_datasets_have_paper_shapes(datasets: dict[str, Dataset], name: str, shape: tuple) -> None:
    ds = datasets[name]
    assert ds.matrix.shape == shape == PAPER_SHAPES[name]
    assert ds.matrix.dtype == np.float64 and ds.matrix.flags.c_contiguous
    assert ds.meta["name"] == name and ds.meta["source"] == "default"
    assert ds.meta["shape"] == list(shape)
    assert ds.meta["sha256"] == hashlib.sha256(ds.matrix.tobytes()).hexdigest()
    assert "sklearn" in ds.meta["origin"]


def test_every_default_shape_is_what_loads(datasets: dict[str, Dataset]) -> None:
    for name, ds in datasets.items():
        assert ds.matrix.shape == SHAPES[name], name
    assert datasets["digits"].matrix.max() == 16.0 and datasets["digits"].matrix.min() == 0.0  # 4-bit pixel counts


def test_spiked_synthetic_has_its_population_spectrum_and_directions() -> None:
    """Sample covariance against the model: eigenvalues (20, 10, 5, 1, …) within Monte-Carlo error (n = 20,000:
    relative error about √(2/n)·λ plus the bulk's spread), and deterministic in the seed."""
    X = spiked_synthetic(seed=3)
    assert X.shape == (20000, 50)
    eigenvalues = np.linalg.eigvalsh(X.T @ X / X.shape[0])[::-1]
    np.testing.assert_allclose(eigenvalues[:3], [20.0, 10.0, 5.0], rtol=0.05)
    assert 0.8 < eigenvalues[3:].min() and eigenvalues[3:].max() < 1.25  # Marchenko–Pastur edges (1 ± √(d/n))²
    np.testing.assert_array_equal(X, spiked_synthetic(seed=3))
    small = spiked_synthetic(n=50000, d=5, spikes=(4.0,), seed=1)
    top = np.linalg.eigh(small.T @ small)[1][:, -1]
    rotation_first_column = np.linalg.qr(np.random.default_rng(1).standard_normal((5, 5)))
    Q, R = rotation_first_column
    assert abs(top @ (Q[:, 0] * np.sign(R[0, 0]))) > 0.99  # the first population direction is Q's first column


def test_spiked_synthetic_rejects_a_spectrum_without_gaps() -> None:
    for spikes in ((0.5,), (2.0, 3.0), tuple(range(60, 10, -1))):
        with pytest.raises(ConfigError, match="spiked_synthetic.spikes"):
            spiked_synthetic(n=10, d=5 if len(spikes) < 5 else 20, spikes=spikes)


def test_diabetes_is_raw_not_scaled(datasets: dict[str, Dataset]) -> None:
    X = datasets["diabetes"].matrix
    # raw AGE column is in years, SEX is coded 1/2 (sklearn's scaled copy has tiny centred values)
    assert 19 <= X[:, 0].min() and X[:, 0].max() <= 79
    assert set(np.unique(X[:, 1])) == {1.0, 2.0}


def test_dataset_matrix_is_read_only(datasets: dict[str, Dataset]) -> None:
    with pytest.raises(ValueError, match="read-only"):
        datasets["wine"].matrix[0, 0] = 1.0


def test_dataset_does_not_freeze_the_callers_array() -> None:
    a = np.zeros((2, 2))
    Dataset(matrix=a, meta={})
    a[0, 0] = 1.0  # still writable


def test_ami_synthetic_shape_nonneg_deterministic() -> None:
    X = ami_synthetic()
    assert X.shape == (1352, 25)
    assert np.all(X >= 0) and np.all(np.isfinite(X))
    np.testing.assert_array_equal(X, ami_synthetic(seed=0))
    assert not np.allclose(X, ami_synthetic(seed=1))
    assert ami_synthetic(n=10, d=48, seed=3).shape == (10, 48)


def test_ami_synthetic_looks_like_residential_load() -> None:
    X = ami_synthetic(d=24)  # one bin per hour: bin k covers [k, k+1) h
    mean = X.mean(axis=0)
    night = mean[1:5].mean()
    assert mean[6:9].max() > 1.3 * night  # morning peak
    assert mean[17:22].max() > 2.0 * night  # evening peak, the largest of the day
    assert int(np.argmax(mean)) in range(17, 22)
    daily = X.sum(axis=1)
    assert 3 < np.median(daily) < 30  # kWh per household-day
    assert daily.std() / daily.mean() > 0.3  # household heterogeneity (lognormal scales)


def test_ami_dataset_meta_says_stand_in() -> None:
    ds = load_dataset("ami_synthetic", seed=2, n=20)
    assert ds.shape == (20, 25)
    assert ds.meta["seed"] == 2 and "stand-in" in ds.meta["label"] and "private AMI" in ds.meta["stand_in"]
    np.testing.assert_array_equal(ds.matrix, ami_synthetic(n=20, seed=2))


def test_sbm_graph_signal_shape_and_determinism() -> None:
    g = sbm_graph_signal()
    assert g.shape == (400, 3)
    np.testing.assert_array_equal(g, sbm_graph_signal(seed=0))
    assert not np.allclose(g, sbm_graph_signal(seed=1))


def test_sbm_graph_signal_is_smooth_on_its_graph() -> None:
    parts = sbm_graph_signal_parts(seed=4)
    S, g, x = parts.laplacian, parts.g, parts.x
    np.testing.assert_array_equal(g, sbm_graph_signal(seed=4))
    # S is a Laplacian of the returned graph: symmetric, zero row sums, degrees on the diagonal
    np.testing.assert_allclose(S, S.T)
    np.testing.assert_allclose(S.sum(axis=1), 0.0, atol=1e-12)
    assert [d for _, d in sorted(parts.graph.degree())] == np.diag(S).astype(int).tolist()
    # graph total variation x^T S x of each filtered signal is well below that of its excitation
    tv_g = np.einsum("ik,ij,jk->k", g, S, g)
    tv_x = np.einsum("ik,ij,jk->k", x, S, x)
    assert np.all(tv_g < 0.35 * tv_x)  # about 0.2 with tau = 0.1 and mean degree 13
    # ... and part of it is specific to this graph: on a random relabelling of the nodes the same
    # values are rougher (mild filter, so the gap is modest: ratio about 0.85 over seeds 0-7)
    perm = np.random.default_rng(0).permutation(400)
    tv_perm = np.einsum("ik,ij,jk->k", g[perm], S, g[perm])
    assert np.all(tv_g < 0.95 * tv_perm)
    # 4 blocks with p_in > p_out: most edges stay inside a block
    blocks = dict(parts.graph.nodes(data="block"))
    inside = sum(blocks[u] == blocks[v] for u, v in parts.graph.edges())
    assert inside > 0.6 * parts.graph.number_of_edges()


def test_sbm_noise_only_when_no_filter() -> None:
    # tau = 0, noise_var = 0: the data is exactly the U[-1,1] excitation
    parts = sbm_graph_signal_parts(n_nodes=50, tau=0.0, noise_var=0.0, seed=1)
    np.testing.assert_array_equal(parts.g, parts.x)
    assert parts.x.min() >= -1 and parts.x.max() <= 1


def test_unknown_dataset_lists_valid_names() -> None:
    with pytest.raises(DataError) as err:
        load_dataset("iris")
    msg = str(err.value)
    assert "iris" in msg and all(name in msg for name in DATASETS)


def test_unknown_source_names_the_config_key() -> None:
    with pytest.raises(DataError, match=r"dataset_options\.wine\.source"):
        load_dataset("wine", source="ftp")


def test_url_source_without_url_or_sha_names_the_key(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"dataset_options\.wine\.url"):
        load_dataset("wine", source="url", cache_dir=tmp_path)
    with pytest.raises(DataError, match=r"dataset_options\.wine\.sha256"):
        load_dataset("wine", source="url", url="http://127.0.0.1:9/w.csv", cache_dir=tmp_path)


def test_bad_generator_option_is_config_error() -> None:
    with pytest.raises(ConfigError, match="n_households"):
        load_dataset("ami_synthetic", n_households=3)
    with pytest.raises(ConfigError):
        load_dataset("wine", n=3)


# ------------------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize("method", NORMALIZATIONS)
def test_normalize_max_row_norm_is_one_on_every_dataset(datasets: dict[str, Dataset], method: str) -> None:
    for name, ds in datasets.items():
        Xn, info = normalize(ds.matrix, method)
        norms = np.linalg.norm(Xn, axis=1)
        assert abs(norms.max() - 1.0) < 1e-12, name
        assert info["method"] == method
        check_unit_ball(Xn)
        if method == "sphere":
            np.testing.assert_allclose(norms, 1.0, atol=1e-12)  # no zero rows in these sets


def test_standardize_centres_and_scales_before_row_scaling(datasets: dict[str, Dataset]) -> None:
    X = datasets["breast_cancer"].matrix
    Xn, info = normalize(X)
    Z = Xn * info["max_row_norm_before"]  # undo the single row scaling
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=1e-10)
    np.testing.assert_allclose(Z.std(axis=0), 1.0, atol=1e-10)
    np.testing.assert_allclose(info["column_means"], X.mean(axis=0))
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1).max(), info["max_row_norm_before"])


def test_scale_only_divides_by_largest_row_norm(datasets: dict[str, Dataset]) -> None:
    X = datasets["wine"].matrix
    Xn, info = normalize(X, "scale")
    np.testing.assert_allclose(Xn * info["max_row_norm_before"], X, rtol=1e-14)
    assert "column_means" not in info


def test_constant_column_and_zero_row_handling() -> None:
    X = np.array([[1.0, 5.0, 0.0], [2.0, 5.0, 1.0], [3.0, 5.0, 2.0], [2.0, 5.0, 1.0]])
    Xn, info = normalize(X)
    assert np.all(np.isfinite(Xn)) and np.all(Xn[:, 1] == 0.0)
    assert info["column_stds"][1] == 0.0
    Xs, _ = normalize(X, "sphere")
    # rows 2 and 4 equal the column means: zero after centering, and stay zero on the sphere
    np.testing.assert_array_equal(Xs[[1, 3]], 0.0)
    np.testing.assert_allclose(np.linalg.norm(Xs[[0, 2]], axis=1), 1.0)
    assert not np.shares_memory(Xn, X)


def test_normalize_rejects_bad_input() -> None:
    with pytest.raises(ConfigError, match="normalization") as err:
        normalize(np.eye(3), "minmax")
    assert all(m in str(err.value) for m in NORMALIZATIONS)
    X = np.eye(3)
    X[1, 2] = np.nan
    with pytest.raises(DataError, match="NaN"):
        normalize(X)
    with pytest.raises(DataError, match="every row is zero"):
        normalize(np.ones((4, 2)))


def test_check_unit_ball() -> None:
    X = np.array([[0.6, 0.8], [0.0, 0.5], [0.0, 1.5], [0.0, 0.0]])
    with pytest.raises(DataError, match="unit ball") as err:
        check_unit_ball(X, key="X_train")
    msg = str(err.value)
    assert "X_train" in msg and "1 of 4 rows" in msg and "1.5" in msg and "normalization" in msg
    check_unit_ball(X[[0, 1, 3]])
    check_unit_ball(np.array([[1.0 + 1e-12, 0.0]]))  # within tol
    with pytest.raises(DataError, match="NaN"):
        check_unit_ball(np.array([[np.nan, 0.0]]))
    with pytest.raises(DataError, match="infinite"):
        check_unit_ball(np.array([[np.inf, 0.0]]))
    with pytest.raises(DataError, match="2-D"):
        check_unit_ball(np.zeros(3))


# -------------------------------------------------------------------------------------- table reader


def test_read_numeric_table_formats(tmp_path: Path) -> None:
    # LARS-style diabetes file: tab separated with header, response in the last column
    p = tmp_path / "diab.txt"
    p.write_text("AGE\tSEX\tBMI\tY\n59\t2\t32.1\t151\n48\t1\t21.6\t75\n")
    np.testing.assert_array_equal(read_numeric_table(p, drop_last_column=True), [[59, 2, 32.1], [48, 1, 21.6]])
    # UCI wdbc style: no header, id column, text label
    p = tmp_path / "wdbc.data"
    p.write_text("842302,M,17.99,10.38\n842517,B,20.57,17.77\n")
    np.testing.assert_array_equal(read_numeric_table(p, drop_columns=[0]), [[17.99, 10.38], [20.57, 17.77]])
    # whitespace separated, no header
    p = tmp_path / "ws.txt"
    p.write_text("1 2  3\n4   5 6\n")
    np.testing.assert_array_equal(read_numeric_table(p), [[1, 2, 3], [4, 5, 6]])
    p = tmp_path / "missing.csv"
    p.write_text("a,b\n1,2\n3,\n")
    with pytest.raises(DataError, match="missing"):
        read_numeric_table(p)


# ------------------------------------------------------------------------------------------ download

CSV = b"f1,f2,f3\n1.0,2.0,3.0\n4.0,5.0,6.0\n-1.5,0.0,2.5\n"
CSV_SHA = hashlib.sha256(CSV).hexdigest()


class _Server:
    def __init__(self, root: Path) -> None:
        self.requests: list[str] = []
        outer = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server API)
                outer.requests.append(self.path)
                super().do_GET()

            def log_message(self, *args: object) -> None:  # keep pytest output clean
                pass

        handler = functools.partial(Handler, directory=str(root))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[_Server]:
    root = tmp_path / "www"
    root.mkdir()
    (root / "table.csv").write_bytes(CSV)
    srv = _Server(root)
    try:
        yield srv
    finally:
        srv.close()


def test_download_success_and_load_through_url_source(server: _Server, tmp_path: Path) -> None:
    dest = tmp_path / "cache" / "table.csv"
    assert download(f"{server.base}/table.csv", CSV_SHA, dest, timeout=5) == dest
    assert dest.read_bytes() == CSV
    assert server.requests == ["/table.csv"]

    cache = tmp_path / "cache2"
    ds = load_dataset("ami_synthetic", source="url", url=f"{server.base}/table.csv", sha256=CSV_SHA, cache_dir=cache)
    np.testing.assert_array_equal(ds.matrix, [[1, 2, 3], [4, 5, 6], [-1.5, 0, 2.5]])
    assert ds.meta["source"] == "url" and ds.meta["url"].endswith("/table.csv")
    assert ds.meta["file_sha256"] == CSV_SHA and ds.meta["sha256"] == matrix_sha256(ds.matrix)
    ds2 = load_dataset(
        "ami_synthetic",
        source="url",
        url=f"{server.base}/table.csv",
        sha256=CSV_SHA.upper(),
        cache_dir=cache,
        drop_last_column=True,
    )
    assert ds2.shape == (3, 2)
    assert len(server.requests) == 2  # the second load reused the cached file
    assert [p.name for p in cache.iterdir() if p.name.startswith(".")] == []


def test_url_source_checks_paper_width(server: _Server, tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"13.*drop_columns"):
        load_dataset("wine", source="url", url=f"{server.base}/table.csv", sha256=CSV_SHA, cache_dir=tmp_path)


def test_download_wrong_checksum_leaves_nothing(server: _Server, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    dest = cache / "table.csv"
    wrong = "0" * 64
    with pytest.raises(DataError) as err:
        download(f"{server.base}/table.csv", wrong, dest, timeout=5)
    msg = str(err.value)
    assert wrong in msg and CSV_SHA in msg and "sha256" in msg and "config" in msg
    assert not dest.exists()
    assert list(cache.iterdir()) == []  # no temp file either
    with pytest.raises(DataError, match="64-character hex"):
        download(f"{server.base}/table.csv", "abc", dest, timeout=5)


def test_download_404_names_the_url(server: _Server, tmp_path: Path) -> None:
    url = f"{server.base}/missing.csv"
    dest = tmp_path / "cache" / "missing.csv"
    with pytest.raises(DataError, match="404") as err:
        download(url, CSV_SHA, dest, timeout=5)
    assert url in str(err.value)
    assert list(dest.parent.iterdir()) == []


def test_download_connection_refused_names_the_url(tmp_path: Path) -> None:
    srv = _Server(tmp_path)
    url = f"{srv.base}/x.csv"
    srv.close()  # nothing listens on that port any more
    with pytest.raises(DataError) as err:
        download(url, CSV_SHA, tmp_path / "x.csv", timeout=2)
    assert url in str(err.value)


def test_download_skips_existing_correct_file(server: _Server, tmp_path: Path) -> None:
    dest = tmp_path / "cache" / "table.csv"
    download(f"{server.base}/table.csv", CSV_SHA, dest, timeout=5)
    download(f"{server.base}/table.csv", CSV_SHA, dest, timeout=5)
    assert server.requests == ["/table.csv"]
    # a corrupted cached copy is fetched again and repaired
    dest.write_bytes(b"garbage")
    download(f"{server.base}/table.csv", CSV_SHA, dest, timeout=5)
    assert dest.read_bytes() == CSV and len(server.requests) == 2
