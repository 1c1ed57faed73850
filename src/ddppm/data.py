r"""Data sets and their preparation (spec §2).

A data set is a real matrix :math:`X \in \mathbb{R}^{n \times d}` whose rows are data points; the rows
are later split among agents and the target is the top left singular vector of :math:`X`.

Supported names (:data:`DATASETS`):

``diabetes``, ``breast_cancer``, ``wine``
    The paper's UCI sets (442×10, 569×30, 178×13). Default source: the copies shipped with
    scikit-learn (no network); ``source="url"`` downloads the original files.
``ami_synthetic``
    An offline, seeded **synthetic stand-in** for the paper's private AMI smart-meter data
    (1352×25), see :func:`ami_synthetic`. Figures must label it as a stand-in (``meta["label"]``).
``sbm_graph_signal``
    The workshop paper's graph signals on a stochastic block model graph (400×3),
    see :func:`sbm_graph_signal`.

The paper assumes every data point lies in the unit ball; :func:`normalize` enforces it and
:func:`check_unit_ball` verifies it.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .errors import ConfigError, DataError
from .io import atomic_write

__all__ = [
    "DATASETS",
    "LABELS",
    "NORMALIZATIONS",
    "PAPER_SHAPES",
    "SOURCES",
    "Dataset",
    "GraphSignal",
    "ami_synthetic",
    "check_unit_ball",
    "download",
    "load_dataset",
    "matrix_sha256",
    "normalize",
    "read_numeric_table",
    "sbm_graph_signal",
    "sbm_graph_signal_parts",
]

DATASETS: tuple[str, ...] = ("diabetes", "breast_cancer", "wine", "ami_synthetic", "sbm_graph_signal")
"""Names accepted by :func:`load_dataset`."""

SOURCES: tuple[str, ...] = ("default", "url")
"""Values accepted for ``source`` (config key ``datasets.<name>.source``)."""

NORMALIZATIONS: tuple[str, ...] = ("standardize", "scale", "sphere")
"""Values accepted by :func:`normalize` (config key ``normalization``)."""

PAPER_SHAPES: dict[str, tuple[int, int]] = {
    "diabetes": (442, 10),
    "breast_cancer": (569, 30),
    "wine": (178, 13),
    "ami_synthetic": (1352, 25),
    "sbm_graph_signal": (400, 3),
}
"""Shapes used in the papers (journal §IV-B, workshop §4)."""

LABELS: dict[str, str] = {
    "diabetes": "Diabetes",
    "breast_cancer": "Breast Cancer",
    "wine": "Wine",
    "ami_synthetic": "AMI (synthetic stand-in)",
    "sbm_graph_signal": "SBM graph signals",
}
"""Human-readable labels for figures; the AMI stand-in is labelled as such."""

_SKLEARN_LOADERS: dict[str, str] = {
    "diabetes": "load_diabetes",
    "breast_cancer": "load_breast_cancer",
    "wine": "load_wine",
}
_URL_OPTIONS = ("delimiter", "header", "drop_last_column", "drop_columns", "check_shape", "timeout")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True, eq=False)
class Dataset:
    """A loaded data matrix with its provenance.

    Attributes
    ----------
    matrix : numpy.ndarray
        Float64, C-contiguous, shape ``(n, d)``, read-only (so ``meta["sha256"]`` stays valid); rows
        are data points. Not normalised.
    meta : dict
        At least ``name``, ``source``, ``shape`` (``[n, d]``) and ``sha256`` (hex digest of
        ``matrix.tobytes()``, see :func:`matrix_sha256`), plus ``label`` and source-specific keys
        (``seed``, ``url``, ``file_sha256``, ``origin``, ``options``, ...).
    """

    matrix: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        m = np.ascontiguousarray(self.matrix, dtype=np.float64)
        if m is self.matrix:
            m = m.copy()
        m.flags.writeable = False
        object.__setattr__(self, "matrix", m)

    @property
    def shape(self) -> tuple[int, int]:
        """``(n, d)``."""
        n, d = self.matrix.shape
        return int(n), int(d)


def matrix_sha256(X: np.ndarray) -> str:
    """Hex sha256 of the bytes of ``X`` as a C-contiguous float64 array.

    Parameters
    ----------
    X : numpy.ndarray
        Any array convertible to float64.

    Returns
    -------
    str
        64 lowercase hex characters.
    """
    return hashlib.sha256(np.ascontiguousarray(X, dtype=np.float64).tobytes()).hexdigest()


# --------------------------------------------------------------------------------------------- loading


def load_dataset(
    name: str,
    *,
    source: str = "default",
    url: str | None = None,
    sha256: str | None = None,
    cache_dir: str | Path | None = None,
    seed: int = 0,
    **options: Any,
) -> Dataset:
    """Load one of the supported data sets as an ``n × d`` float64 matrix (rows = data points).

    Parameters
    ----------
    name : str
        One of :data:`DATASETS`.
    source : {"default", "url"}
        ``"default"``: the scikit-learn copy for ``diabetes`` (``load_diabetes(scaled=False)``, the raw
        features), ``breast_cancer`` and ``wine`` (features only, no targets), the seeded generator for
        ``ami_synthetic`` (:func:`ami_synthetic`) and ``sbm_graph_signal`` (:func:`sbm_graph_signal`).
        ``"url"``: download a delimited numeric table from ``url`` (checked against ``sha256``) into
        ``cache_dir`` and read it with :func:`read_numeric_table`.
    url, sha256 : str, optional
        Required for ``source="url"`` (config keys ``datasets.<name>.url`` / ``datasets.<name>.sha256``).
    cache_dir : str or Path, optional
        Download directory; default ``$DDPPM_CACHE_DIR`` or ``~/.cache/ddppm``.
    seed : int
        Seed of the synthetic generators (ignored by the other sources but recorded).
    **options
        ``source="default"``, synthetic sets: keyword arguments of the generator (e.g. ``n``, ``d`` for
        ``ami_synthetic``; ``n_nodes``, ``tau``... for ``sbm_graph_signal``). The scikit-learn sets take
        none. ``source="url"``: ``delimiter``, ``header``, ``drop_last_column``, ``drop_columns`` (see
        :func:`read_numeric_table`), ``timeout`` (seconds, default 30) and ``check_shape`` (default
        True: for diabetes / breast_cancer / wine the number of columns must equal the paper's ``d``).

    Returns
    -------
    Dataset
        The matrix and its metadata; ``meta["sha256"]`` hashes the matrix before any normalisation.

    Raises
    ------
    DataError
        Unknown name or source, missing url/sha256, download or checksum failure, bad table.
    ConfigError
        Unknown option for the chosen source.
    """
    if name not in DATASETS:
        raise DataError(
            f"unknown dataset {name!r}; valid dataset names are {', '.join(DATASETS)}. "
            "Fix the dataset name in the config (the keys under `datasets`)."
        )
    if source not in SOURCES:
        raise DataError(
            f"unknown source {source!r} for dataset {name!r}; valid sources are {', '.join(SOURCES)}. "
            f"Fix `datasets.{name}.source` in the config."
        )
    meta: dict[str, Any] = {"name": name, "label": LABELS[name], "source": source, "seed": int(seed)}
    if source == "url":
        X = _load_url(name, url=url, sha256=sha256, cache_dir=cache_dir, options=options, meta=meta)
        if name == "ami_synthetic":
            meta["label"] = "AMI stand-in (downloaded smart-meter profiles)"
            meta["stand_in"] = "downloaded stand-in for the paper's private AMI smart-meter data"
    elif name in _SKLEARN_LOADERS:
        if options:
            raise ConfigError(
                f"dataset {name!r} with source 'default' takes no options, got {sorted(options)}; "
                f"remove them from `datasets.{name}`."
            )
        X = _load_sklearn(name, meta)
    else:
        generator = ami_synthetic if name == "ami_synthetic" else sbm_graph_signal
        allowed = [k for k in inspect.signature(generator).parameters if k != "seed"]
        unknown = sorted(set(options) - set(allowed))
        if unknown:
            raise ConfigError(
                f"unknown option(s) {unknown} for dataset {name!r}; valid options are {', '.join(allowed)} "
                f"(and `seed`). Fix `datasets.{name}`."
            )
        X = generator(seed=seed, **options)
        meta["origin"] = f"ddppm.data.{generator.__name__}"
        meta["options"] = dict(options)
        if name == "ami_synthetic":
            meta["stand_in"] = "synthetic stand-in for the paper's private AMI smart-meter data"
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise DataError(f"dataset {name!r} loaded with unusable shape {X.shape}; expected a non-empty n×d table.")
    meta["shape"] = [int(X.shape[0]), int(X.shape[1])]
    meta["sha256"] = matrix_sha256(X)
    return Dataset(matrix=X, meta=meta)


def _load_sklearn(name: str, meta: dict[str, Any]) -> np.ndarray:
    import sklearn
    import sklearn.datasets as skd

    loader = getattr(skd, _SKLEARN_LOADERS[name])
    bunch = loader(scaled=False) if name == "diabetes" else loader()
    call = "load_diabetes(scaled=False)" if name == "diabetes" else f"{_SKLEARN_LOADERS[name]}()"
    meta["origin"] = f"sklearn.datasets.{call}.data"
    meta["sklearn_version"] = sklearn.__version__
    return np.asarray(bunch.data, dtype=np.float64)


def _default_cache_dir() -> Path:
    env = os.environ.get("DDPPM_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "ddppm"


def _load_url(
    name: str,
    *,
    url: str | None,
    sha256: str | None,
    cache_dir: str | Path | None,
    options: dict[str, Any],
    meta: dict[str, Any],
) -> np.ndarray:
    if not url:
        raise DataError(f"dataset {name!r} has source 'url' but no URL; set `datasets.{name}.url`.")
    if not sha256:
        raise DataError(
            f"dataset {name!r} has source 'url' but no pinned checksum; set `datasets.{name}.sha256` "
            "to the sha256 hex digest of the file."
        )
    unknown = sorted(set(options) - set(_URL_OPTIONS))
    if unknown:
        raise ConfigError(
            f"unknown option(s) {unknown} for dataset {name!r} with source 'url'; valid options are "
            f"{', '.join(_URL_OPTIONS)}. Fix `datasets.{name}`."
        )
    opts = dict(options)
    timeout = float(opts.pop("timeout", 30.0))
    check_shape = bool(opts.pop("check_shape", True))
    basename = Path(urllib.parse.urlparse(url).path).name or "download"
    cache = Path(cache_dir) if cache_dir is not None else _default_cache_dir()
    dest = cache / f"{name}-{sha256.strip().lower()[:12]}-{basename}"
    path = download(url, sha256, dest, timeout=timeout)
    X = read_numeric_table(path, **opts)
    if check_shape and name in _SKLEARN_LOADERS and X.shape[1] != PAPER_SHAPES[name][1]:
        raise DataError(
            f"dataset {name!r} from {url} has {X.shape[1]} numeric columns, the paper uses "
            f"{PAPER_SHAPES[name][1]}; drop label/id columns with `datasets.{name}.drop_columns` or "
            f"`drop_last_column`, or set `datasets.{name}.check_shape: false`."
        )
    meta.update(url=url, file_sha256=sha256.strip().lower(), cache_path=str(path), options=dict(options))
    meta["origin"] = url
    return X


def read_numeric_table(
    path: str | Path,
    *,
    delimiter: str | None = None,
    header: bool | None = None,
    drop_last_column: bool = False,
    drop_columns: Sequence[int] = (),
) -> np.ndarray:
    """Read a delimited numeric table into an ``n × d`` float64 matrix.

    Expected format: one data point per line, fields separated by a delimiter (comma, semicolon, tab
    or runs of whitespace), optionally a single header line. Columns that are not entirely numeric
    (e.g. a class label such as ``M``/``B``) are dropped; so are the columns listed in
    ``drop_columns`` (0-based positions in the file, applied first, e.g. an id or a numeric class
    column) and, with ``drop_last_column=True``, the last remaining column (e.g. the response ``Y`` of
    the LARS diabetes file). Missing values are an error.

    Parameters
    ----------
    path : str or Path
        The file.
    delimiter : str, optional
        Field separator; default: sniffed from the first line (``,`` then ``;`` then tab, else
        whitespace).
    header : bool, optional
        Whether the first line is a header; default: yes if it has no numeric field or fewer numeric
        fields than the second line.
    drop_last_column : bool
        Drop the last column after the non-numeric ones are removed.
    drop_columns : sequence of int
        Positions of columns to drop before anything else.

    Returns
    -------
    numpy.ndarray
        Float64 matrix.

    Raises
    ------
    DataError
        Empty file, no numeric column, or missing / non-finite values.
    """
    p = Path(path)
    with p.open("r", encoding="utf-8", errors="replace") as fh:
        lines = (line for line in fh if line.strip())
        first = next(lines, "")
        second = next(lines, "")
    if not first:
        raise DataError(f"data file {str(p)!r} is empty.")
    if delimiter is None:
        delimiter = next((c for c in (",", ";", "\t") if c in first), r"\s+")
    if header is None:
        pattern = delimiter if delimiter == r"\s+" else re.escape(delimiter)
        n_first, n_second = (
            sum(_is_number(f.strip().strip("\"'")) for f in re.split(pattern, line.strip()))
            for line in (first, second or first)
        )
        # A header line has fewer numeric fields than a data line (or none at all).
        header = n_first == 0 or n_first < n_second
    df = pd.read_csv(
        p,
        sep=delimiter,
        header=0 if header else None,
        engine="python" if len(delimiter) > 1 else "c",
        skipinitialspace=True,
        skip_blank_lines=True,
    )
    if drop_columns:
        bad = [i for i in drop_columns if not -df.shape[1] <= int(i) < df.shape[1]]
        if bad:
            raise DataError(
                f"drop_columns {bad} out of range for {str(p)!r}, which has {df.shape[1]} columns; "
                "fix `drop_columns` (0-based positions) in the config."
            )
        df = df.drop(columns=[df.columns[int(i)] for i in drop_columns])
    numeric = df.apply(pd.to_numeric, errors="coerce")
    keep = [c for c in df.columns if numeric[c].notna().sum() == df[c].notna().sum() and df[c].notna().any()]
    numeric = numeric[keep]
    if drop_last_column and numeric.shape[1] > 0:
        numeric = numeric.iloc[:, :-1]
    if numeric.shape[1] == 0:
        raise DataError(f"data file {str(p)!r} has no numeric column; expected a delimited numeric table.")
    X = numeric.to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(X)):
        bad = int((~np.isfinite(X)).any(axis=1).sum())
        raise DataError(f"data file {str(p)!r} has {bad} row(s) with missing or non-finite values.")
    return np.ascontiguousarray(X)


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def download(url: str, sha256: str, dest: Path, timeout: float = 30) -> Path:
    """Download ``url`` to ``dest`` atomically and verify its sha256.

    If ``dest`` already exists with the expected checksum nothing is downloaded. Otherwise the body is
    streamed into a temporary file next to ``dest`` (:func:`ddppm.io.atomic_write`), hashed, and only
    moved to ``dest`` when the digest matches; on any failure no partial file is left behind.

    Parameters
    ----------
    url : str
        Source URL (``http``, ``https`` or ``file``).
    sha256 : str
        Expected hex digest (config key ``datasets.<name>.sha256``).
    dest : Path
        Destination file; parent directories are created.
    timeout : float
        Socket timeout in seconds.

    Returns
    -------
    Path
        ``dest``.

    Raises
    ------
    DataError
        Malformed ``sha256``, a network / HTTP error (the message names the URL), or a checksum
        mismatch (the message gives expected and actual digests).
    """
    expected = sha256.strip().lower()
    if not _HEX64.match(expected):
        raise DataError(
            f"sha256 {sha256!r} for {url} is not a 64-character hex digest; set `sha256` in the config "
            "to the file's sha256 (e.g. from `sha256sum`)."
        )
    dest = Path(dest)
    if dest.is_file() and _file_sha256(dest) == expected:
        return dest
    try:
        with atomic_write(dest) as tmp:
            h = hashlib.sha256()
            try:
                with urllib.request.urlopen(url, timeout=timeout) as resp, tmp.open("wb") as out:
                    for chunk in iter(lambda: resp.read(1 << 16), b""):
                        h.update(chunk)
                        out.write(chunk)
            except urllib.error.HTTPError as exc:
                raise DataError(f"download of {url} failed: HTTP {exc.code} {exc.reason}.") from exc
            except (urllib.error.URLError, OSError, ValueError) as exc:
                raise DataError(f"download of {url} failed: {exc}. Check the URL and the network.") from exc
            actual = h.hexdigest()
            if actual != expected:
                raise DataError(
                    f"checksum mismatch for {url}: expected sha256 {expected}, got {actual}. Update "
                    "`sha256` in the config if the file legitimately changed, or check the URL."
                )
    except OSError as exc:  # e.g. the cache directory cannot be created
        raise DataError(f"cannot store the download of {url} at {str(dest)!r}: {exc}") from exc
    return dest


# ------------------------------------------------------------------------------------------ generators


def ami_synthetic(n: int = 1352, d: int = 25, seed: int = 0) -> np.ndarray:
    r"""Seeded synthetic smart-meter daily load profiles (stand-in for the paper's private AMI data).

    The journal paper's AMI set (1352 × 25) is not public. This generator produces data of the same
    shape and of the same kind: each row is one household-day, each column the energy drawn in one of
    ``d`` equal time bins over the day (bin centres :math:`t_k = 24 (k + 1/2) / d` hours).

    Rows come from :math:`H = \lceil n / 7 \rceil` households observed for up to a week (the last
    household may have fewer days). Household :math:`h` has an archetype (commuter, at home during
    the day, with rooftop solar; probabilities .45/.35/.20), a lognormal scale
    :math:`s_h \sim \log\mathcal{N}(\log 0.4, 0.5^2)` (kWh per hour), a base (night) load
    :math:`b_h` and peak times :math:`\mu^{m}_h \approx 7.5` h, :math:`\mu^{e}_h \approx 19.5` h.
    Day :math:`j` of household :math:`h` has the load

    .. math::

        \ell(t) = s_h \Big[b_h + a^m \phi(t; \mu^m_h + \delta^m_j, w^m)
                  + a^e \phi(t; \mu^e_h + \delta^e_j, w^e) + a^{mid} \phi(t; 13, 3)
                  - \gamma_h \max(0, \sin(\pi (t - 6) / 12))\Big]_+ \, e^{\eta_{jk}},

    where :math:`\phi(t;\mu,w) = \exp(-\mathrm{dist}_{24}(t,\mu)^2 / 2w^2)` is a bump on the 24-hour
    circle, :math:`\delta \sim \mathcal{N}(0, 0.75^2)` shift the peaks from day to day (weekend days,
    :math:`j \in \{5, 6\}`, have a later, flatter morning peak and more midday use), :math:`\gamma_h`
    is the solar dip (net import can fall to the base load but not below zero) and
    :math:`\eta_{jk} \sim \mathcal{N}(0, 0.15^2)` is multiplicative noise. All entries are
    non-negative.

    Parameters
    ----------
    n : int
        Number of household-days (rows).
    d : int
        Number of time bins per day (columns).
    seed : int
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    numpy.ndarray
        ``(n, d)`` float64, non-negative, energy per bin in kWh.

    Raises
    ------
    ConfigError
        If ``n`` or ``d`` is not a positive integer.
    """
    if int(n) != n or n < 1 or int(d) != d or d < 1:
        raise ConfigError(f"ami_synthetic needs positive integers n and d, got n={n!r}, d={d!r}.")
    n, d = int(n), int(d)
    rng = np.random.default_rng(seed)
    t = 24.0 * (np.arange(d) + 0.5) / d  # bin centres, hours
    days_per_household = 7
    n_households = -(-n // days_per_household)
    hh = np.repeat(np.arange(n_households), days_per_household)[:n]
    day = np.tile(np.arange(days_per_household), n_households)[:n]
    weekend = day >= 5

    kind = rng.choice(3, size=n_households, p=[0.45, 0.35, 0.20])  # 0 commuter, 1 at home, 2 solar
    scale = rng.lognormal(mean=np.log(0.4), sigma=0.5, size=n_households)
    base = rng.uniform(0.25, 0.5, size=n_households)
    mu_m = rng.normal(7.5, 0.5, size=n_households)
    mu_e = rng.normal(19.5, 0.75, size=n_households)
    a_m = np.where(kind == 1, 0.8, 1.2) * rng.uniform(0.8, 1.2, size=n_households)
    a_e = rng.uniform(1.5, 2.5, size=n_households)
    a_mid = np.where(kind == 1, 0.9, 0.2) * rng.uniform(0.7, 1.3, size=n_households)
    solar = np.where(kind == 2, rng.uniform(0.8, 1.6, size=n_households), 0.0)

    shift_m = rng.normal(0.0, 0.75, size=n) + np.where(weekend, 1.5, 0.0)
    shift_e = rng.normal(0.0, 0.75, size=n)
    w_m = np.where(weekend, 1.8, 1.2)
    mid_boost = np.where(weekend, 0.6, 0.0)

    def bump(mu: np.ndarray, width: np.ndarray | float) -> np.ndarray:
        diff = np.abs(t[None, :] - np.asarray(mu)[:, None]) % 24.0
        dist = np.minimum(diff, 24.0 - diff)
        return np.exp(-(dist**2) / (2.0 * np.asarray(width, dtype=float).reshape(-1, 1) ** 2))

    sun = np.maximum(0.0, np.sin(np.pi * (t - 6.0) / 12.0))[None, :]
    shape = (
        base[hh, None]
        + a_m[hh, None] * bump(mu_m[hh] + shift_m, w_m)
        + a_e[hh, None] * bump(mu_e[hh] + shift_e, 1.6)
        + (a_mid[hh] + mid_boost)[:, None] * bump(np.full(n, 13.0), 3.0)
        - solar[hh, None] * sun
    )
    # Solar can push net import down to (not below) a small fraction of the base load.
    shape = np.maximum(shape, 0.1 * base[hh, None])
    noise = np.exp(rng.normal(0.0, 0.15, size=(n, d)))
    kwh_per_bin = 24.0 / d
    X = scale[hh, None] * shape * noise * kwh_per_bin
    return np.ascontiguousarray(X, dtype=np.float64)


@dataclass(frozen=True, eq=False)
class GraphSignal:
    """The parts of the workshop SBM data: signals, excitation, Laplacian and graph.

    Attributes
    ----------
    g : numpy.ndarray
        ``(n_nodes, n_signals)`` filtered, noisy graph signals (the data matrix).
    x : numpy.ndarray
        ``(n_nodes, n_signals)`` excitation signals, i.i.d. U[-1, 1].
    laplacian : numpy.ndarray
        ``(n_nodes, n_nodes)`` combinatorial Laplacian :math:`S = D - A`.
    graph : networkx.Graph
        The SBM graph (node ``i`` is row ``i``; attribute ``block``).
    """

    g: np.ndarray
    x: np.ndarray
    laplacian: np.ndarray
    graph: Any


def sbm_graph_signal_parts(
    n_nodes: int = 400,
    n_signals: int = 3,
    n_blocks: int = 4,
    p_in: float = 0.1,
    p_out: float = 0.01,
    tau: float = 0.1,
    noise_var: float = 0.01,
    seed: int = 0,
) -> GraphSignal:
    r"""Generate the workshop paper's SBM graph signals and return all parts.

    See :func:`sbm_graph_signal` for the model and parameters.

    Returns
    -------
    GraphSignal
        ``g``, ``x``, the Laplacian ``S`` and the graph.
    """
    import networkx as nx

    if int(n_blocks) != n_blocks or not 1 <= n_blocks <= n_nodes:
        raise ConfigError(f"sbm_graph_signal needs 1 <= n_blocks <= n_nodes, got {n_blocks} and {n_nodes}.")
    if int(n_signals) != n_signals or n_signals < 1:
        raise ConfigError(f"sbm_graph_signal needs n_signals >= 1, got {n_signals!r}.")
    if not (0.0 <= p_in <= 1.0 and 0.0 <= p_out <= 1.0):
        raise ConfigError(f"sbm_graph_signal needs p_in, p_out in [0, 1], got {p_in!r}, {p_out!r}.")
    if tau < 0 or noise_var < 0:
        raise ConfigError(f"sbm_graph_signal needs tau >= 0 and noise_var >= 0, got {tau!r}, {noise_var!r}.")
    n_nodes, n_blocks, n_signals = int(n_nodes), int(n_blocks), int(n_signals)
    rng = np.random.default_rng(seed)
    sizes = [n_nodes // n_blocks + (1 if b < n_nodes % n_blocks else 0) for b in range(n_blocks)]
    probs = np.full((n_blocks, n_blocks), float(p_out))
    np.fill_diagonal(probs, float(p_in))
    graph_seed = int(rng.integers(0, 2**31 - 1))
    G = nx.stochastic_block_model(sizes, probs.tolist(), seed=graph_seed)
    S = nx.laplacian_matrix(G, nodelist=range(n_nodes)).toarray().astype(np.float64)
    x = rng.uniform(-1.0, 1.0, size=(n_nodes, n_signals))
    noise = rng.normal(0.0, np.sqrt(noise_var), size=(n_nodes, n_signals))
    g = np.linalg.solve(np.eye(n_nodes) + tau * S, x) + noise
    return GraphSignal(g=np.ascontiguousarray(g), x=x, laplacian=S, graph=G)


def sbm_graph_signal(
    n_nodes: int = 400,
    n_signals: int = 3,
    n_blocks: int = 4,
    p_in: float = 0.1,
    p_out: float = 0.01,
    tau: float = 0.1,
    noise_var: float = 0.01,
    seed: int = 0,
) -> np.ndarray:
    r"""Graph signals on a stochastic block model graph (workshop paper, §4, eq. 19).

    A graph :math:`\mathcal{G}` on ``n_nodes`` nodes is drawn from a stochastic block model with
    ``n_blocks`` near-equal blocks, edge probability ``p_in`` inside a block and ``p_out`` between
    blocks (:func:`networkx.stochastic_block_model`). With :math:`S = D - A` its Laplacian, each of
    the ``n_signals`` columns is the diffusion-filtered excitation

    .. math::

        g[k] = (I + \tau S)^{-1} x[k] + n[k], \qquad x[k] \sim U[-1, 1]^{n},
        \quad n[k] \sim \mathcal{N}(0, \sigma^2 I),

    with :math:`\tau = 0.1` and :math:`\sigma^2 = 0.01` as in the paper (``noise_var`` is the
    variance). The filter is a low-pass one, so :math:`g^\top S g \ll x^\top S x`.

    The paper states 400 nodes and 3 signals but **not** the number of blocks nor the edge
    probabilities. The defaults here (4 blocks of 100 nodes, matching the 4 agents of 100 rows;
    ``p_in = 0.1``, ``p_out = 0.01``, i.e. about 10 neighbours inside and 3 outside the block) are
    the project's choice.

    Parameters
    ----------
    n_nodes, n_signals, n_blocks : int
        Graph size, number of signals (columns), number of SBM blocks.
    p_in, p_out : float
        Edge probabilities within / between blocks.
    tau : float
        Diffusion constant of the filter.
    noise_var : float
        Variance of the Gaussian measurement noise.
    seed : int
        Seed (graph, excitation and noise all derive from it).

    Returns
    -------
    numpy.ndarray
        ``(n_nodes, n_signals)`` float64.
    """
    return sbm_graph_signal_parts(
        n_nodes=n_nodes,
        n_signals=n_signals,
        n_blocks=n_blocks,
        p_in=p_in,
        p_out=p_out,
        tau=tau,
        noise_var=noise_var,
        seed=seed,
    ).g


# ------------------------------------------------------------------------------------- normalisation


def _validate_matrix(X: np.ndarray, key: str) -> np.ndarray:
    A = np.asarray(X, dtype=np.float64)
    if A.ndim != 2:
        raise DataError(f"{key} must be a 2-D n×d matrix (rows = data points), got shape {A.shape}.")
    bad = ~np.isfinite(A)
    if bad.any():
        rows = int(bad.any(axis=1).sum())
        raise DataError(
            f"{key} contains NaN or infinite entries in {rows} row(s); clean or drop them before normalising."
        )
    return A


def normalize(X: np.ndarray, method: str = "standardize") -> tuple[np.ndarray, dict[str, Any]]:
    r"""Bring every row into the unit ball (spec §2; the paper: "every point within or on the unit ball").

    ``"standardize"`` (default)
        :math:`\tilde x_{rj} = (x_{rj} - \mu_j) / \sigma_j` (population std; columns with
        :math:`\sigma_j = 0` become 0), then :math:`x_r \leftarrow \tilde x_r / \max_s \|\tilde x_s\|`,
        so :math:`\max_r \|x_r\| = 1`.
    ``"scale"``
        Only :math:`x_r \leftarrow x_r / \max_s \|x_s\|` (no centering).
    ``"sphere"``
        Standardise as above, then :math:`x_r \leftarrow \tilde x_r / \|\tilde x_r\|` (every non-zero
        row on the unit sphere; zero rows stay 0).

    Parameters
    ----------
    X : numpy.ndarray
        ``(n, d)`` finite matrix. Not modified.
    method : {"standardize", "scale", "sphere"}
        Config key ``normalization``.

    Returns
    -------
    Xn : numpy.ndarray
        Normalised float64 copy with maximum row norm 1.
    info : dict
        ``method``, ``max_row_norm_input`` (of ``X``), ``max_row_norm_before`` (of the matrix just before
        the row scaling / projection, i.e. the divisor for ``standardize`` / ``scale``), and
        ``column_means`` / ``column_stds`` (lists) when standardising.

    Raises
    ------
    ConfigError
        Unknown ``method``.
    DataError
        Non-2-D input, NaN/inf entries, or a matrix whose rows are all zero (after centering).
    """
    if method not in NORMALIZATIONS:
        raise ConfigError(
            f"unknown normalization {method!r}; set `normalization` to one of {', '.join(NORMALIZATIONS)}."
        )
    A = _validate_matrix(X, "X").copy()
    if A.size == 0:
        raise DataError(f"cannot normalise an empty matrix of shape {A.shape}; check the data set.")
    info: dict[str, Any] = {"method": method, "max_row_norm_input": float(np.linalg.norm(A, axis=1).max())}
    if method in ("standardize", "sphere"):
        mean = A.mean(axis=0)
        std = A.std(axis=0)
        safe = np.where(std > 0, std, 1.0)
        A = (A - mean) / safe
        A[:, std == 0] = 0.0
        info["column_means"] = mean.tolist()
        info["column_stds"] = std.tolist()
    norms = np.linalg.norm(A, axis=1)
    top = float(norms.max()) if norms.size else 0.0
    info["max_row_norm_before"] = top
    if top == 0.0:
        raise DataError(
            f"cannot normalise X with method {method!r}: every row is zero"
            + (" after centering (all rows identical)" if method != "scale" else "")
            + "; the data set carries no information."
        )
    if method == "sphere":
        A = np.divide(A, norms[:, None], out=np.zeros_like(A), where=norms[:, None] > 0)
    else:
        A /= top
    return A, info


def check_unit_ball(X: np.ndarray, tol: float = 1e-9, key: str = "X") -> None:
    """Check the paper's assumption that every row lies in the unit ball, :math:`\\|x_r\\| \\le 1`.

    Parameters
    ----------
    X : numpy.ndarray
        ``(n, d)`` matrix.
    tol : float
        Allowed excess: rows with norm up to ``1 + tol`` pass.
    key : str
        Name of the input in error messages.

    Raises
    ------
    DataError
        If ``X`` is not 2-D, has NaN/inf entries, or has rows of norm ``> 1 + tol`` (the message gives
        their count, the largest norm and the fix).
    """
    A = _validate_matrix(X, key)
    norms = np.linalg.norm(A, axis=1)
    over = norms > 1.0 + tol
    if over.any():
        raise DataError(
            f"{key}: {int(over.sum())} of {A.shape[0]} rows lie outside the unit ball (largest row norm "
            f"{float(norms.max()):.6g} > 1 + {tol:g}). Normalise the data with ddppm.data.normalize or set "
            f"`normalization` in the config ({' | '.join(NORMALIZATIONS)})."
        )
