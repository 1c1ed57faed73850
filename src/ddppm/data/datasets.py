r"""Data sets and their preparation (docs/method.md §2).

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
``digits``, ``spiked_synthetic``, ``heavy_tailed``
    The common task's own sets (docs/common_task.md), from no source paper: scikit-learn's bundled 8×8 digit
    images (1797×64, a real higher-dimensional set), a seeded spiked-covariance set with a known spectral gap
    (20000×50, :func:`spiked_synthetic`) and seeded heavy-tailed counts capped at a public 500 (20000×10,
    :func:`heavy_tailed`).
any other name, with ``source="file"``
    The user's own CSV, TSV or Parquet file (:mod:`ddppm.data.local_file`; config ``dataset_options.<name>``).

The paper assumes every data point lies in the unit ball; :func:`normalize` enforces it and
:func:`check_unit_ball` verifies it.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ddppm.core.errors import ConfigError, DataError
from ddppm.data.bundled import load_bundled
from ddppm.data.local_file import FILE_OPTIONS, load_local
from ddppm.data.sources import URL_LOADER_OPTIONS, load_url
from ddppm.data.specs import dataset_specs

_SPECS = dataset_specs()

DATASETS: tuple[str, ...] = tuple(_SPECS)
"""Names accepted by :func:`load_dataset`: one record each in ``datasets.yaml`` (:mod:`ddppm.data.specs`)."""

SOURCES: tuple[str, ...] = ("default", "url", "file")
"""Values accepted for ``source`` (config key ``dataset_options.<name>.source``)."""

NORMALIZATIONS: tuple[str, ...] = ("standardize", "scale", "sphere")
"""Values accepted by :func:`normalize` (config key ``normalization``)."""

PAPER_SHAPES: dict[str, tuple[int, int]] = {name: spec.shape for name, spec in _SPECS.items() if spec.papers}
"""Shapes used in the papers (journal §IV-B, workshop §4)."""

SHAPES: dict[str, tuple[int, int]] = {name: spec.shape for name, spec in _SPECS.items()}
"""Default shapes of every data set: the papers' and the common task's own."""

LABELS: dict[str, str] = {name: spec.label for name, spec in _SPECS.items()}
"""Human-readable labels for figures; a stand-in is labelled as such."""

_SKLEARN_LOADERS: dict[str, str] = {name: spec.sklearn_loader for name, spec in _SPECS.items() if spec.sklearn_loader}
_GENERATORS = {name: spec.generator for name, spec in _SPECS.items() if spec.generator}


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


URL_OPTIONS = ("url", "sha256", *URL_LOADER_OPTIONS)


def accepted_options(name: str, source: str) -> tuple[str, ...]:
    """The loader options (config keys under ``dataset_options.<name>``) that do something for this
    dataset and source; any other loader option is an error, never silently ignored."""
    if source == "url":
        return URL_OPTIONS
    if source == "file":
        return FILE_OPTIONS
    if name in _SKLEARN_LOADERS:
        return ()
    generator = _GENERATORS[name]
    return tuple(inspect.signature(generator).parameters)


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
        One of :data:`DATASETS`, or any name with ``source="file"``.
    source : {"default", "url", "file"}
        ``"default"``: the scikit-learn copy for ``diabetes`` (``load_diabetes(scaled=False)``, the raw
        features), ``breast_cancer``, ``wine`` and ``digits`` (features only, no targets), the seeded generator
        for ``ami_synthetic`` (:func:`ami_synthetic`), ``sbm_graph_signal`` (:func:`sbm_graph_signal`),
        ``spiked_synthetic`` (:func:`spiked_synthetic`) and ``heavy_tailed`` (:func:`heavy_tailed`).
        ``"url"``: download a delimited numeric table from ``url`` (checked against ``sha256``) into
        ``cache_dir`` and read it with :func:`read_numeric_table`.
        ``"file"``: read a local CSV, TSV or Parquet file (option ``path``; :mod:`ddppm.data.local_file`).
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
        ``source="file"``: ``path``, ``columns``, ``drop_columns``, ``header``, ``delimiter``
        (:func:`ddppm.data.local_file.read_local_file`).

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
    if source not in SOURCES:
        raise DataError(
            f"unknown source {source!r} for dataset {name!r}; valid sources are {', '.join(SOURCES)}. "
            f"Fix `dataset_options.{name}.source` in the config."
        )
    if name not in DATASETS and source != "file":
        raise DataError(
            f"unknown dataset {name!r}; valid dataset names are {', '.join(DATASETS)}. Fix the dataset name in the "
            f"config, or load a file of your own under this name (`dataset_options.{name}`: source file, path)."
        )
    meta: dict[str, Any] = {"name": name, "label": LABELS.get(name, name), "source": source, "seed": int(seed)}
    if source == "file":
        X, found = load_local(name, {**options, **{k: v for k, v in (("url", url), ("sha256", sha256)) if v}})
        meta.update(found)
    elif source == "url":
        expected = SHAPES[name][1] if name in _SKLEARN_LOADERS else None
        X = load_url(name, url=url, sha256=sha256, cache_dir=cache_dir, options=options, meta=meta, columns=expected)
        if name == "ami_synthetic":
            meta["label"] = "AMI stand-in (downloaded smart-meter profiles)"
            meta["stand_in"] = "downloaded stand-in for the paper's private AMI smart-meter data"
    elif name in _SKLEARN_LOADERS:
        if options:
            raise ConfigError(
                f"dataset {name!r} with source 'default' takes no options, got {sorted(options)}; "
                f"remove them from `dataset_options.{name}`."
            )
        X = _load_sklearn(name, meta)
    else:
        generator = _GENERATORS[name]
        allowed = [k for k in inspect.signature(generator).parameters if k != "seed"]
        unknown = sorted(set(options) - set(allowed))
        if unknown:
            raise ConfigError(
                f"unknown option(s) {unknown} for dataset {name!r}; valid options are {', '.join(allowed)} "
                f"(and `seed`). Fix `dataset_options.{name}`."
            )
        X = generator(seed=seed, **options)
        meta["origin"] = f"ddppm.data.{generator.__name__}"
        meta["options"] = dict(options)
        if _SPECS[name].stand_in:
            meta["stand_in"] = _SPECS[name].stand_in
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise DataError(f"dataset {name!r} loaded with unusable shape {X.shape}; expected a non-empty n×d table.")
    meta["shape"] = [int(X.shape[0]), int(X.shape[1])]
    meta["sha256"] = matrix_sha256(X)
    return Dataset(matrix=X, meta=meta)


def _load_sklearn(name: str, meta: dict[str, Any]) -> np.ndarray:
    """``sklearn.datasets.<loader>(**arguments).data`` as float64, with ``origin`` and ``sklearn_version`` in ``meta``.

    Read from scikit-learn's installed data files without importing scikit-learn
    (:func:`ddppm.data.bundled.load_bundled`); ``tests/data/test_bundled_loaders.py`` checks that the matrix is
    bit-identical to scikit-learn's and the meta the same. A case it does not reproduce (a missing file,
    ``load_diabetes(scaled=True)``) goes through scikit-learn itself.
    """
    loader = _SKLEARN_LOADERS[name]
    arguments = _SPECS[name].sklearn_arguments
    call = f"{loader}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"
    meta["origin"] = f"sklearn.datasets.{call}.data"
    # start-up time: `import sklearn.datasets` costs ~0.6 s (scipy.stats) in every job, for a few small files
    X = load_bundled(loader, arguments)
    if X is not None:
        try:
            meta["sklearn_version"] = importlib.metadata.version("scikit-learn")
            return X
        except importlib.metadata.PackageNotFoundError:
            pass
    import sklearn
    import sklearn.datasets as skd

    meta["sklearn_version"] = sklearn.__version__
    return np.asarray(getattr(skd, loader)(**arguments).data, dtype=np.float64)


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
    r"""Bring every row into the unit ball (docs/method.md §2; the paper: "every point within or on the unit ball").

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
