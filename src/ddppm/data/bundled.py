"""scikit-learn's bundled data files, read without importing scikit-learn.

``import sklearn.datasets`` costs about 0.6 s (it pulls in scipy.stats), paid by every pipeline job that loads
``wine``, ``diabetes``, ``breast_cancer`` or ``digits`` just to read a small file. :func:`load_bundled` finds the
installed package's ``datasets/data`` directory with :func:`importlib.util.find_spec` (which does not execute the
package) and parses the files with the very calls of scikit-learn 1.9.1's ``sklearn/datasets/_base.py``
(``load_csv_data``, ``load_gzip_compressed_csv_data``, ``load_digits``, ``load_diabetes``), so the matrix is bit for
bit ``sklearn.datasets.load_*(**arguments).data``; ``tests/data/test_bundled_loaders.py`` checks it against the
installed scikit-learn. Whatever this module does not reproduce (a missing file, another layout, an argument such
as ``load_diabetes(scaled=True)``, which needs ``sklearn.preprocessing.scale``) returns ``None``, and the caller
falls back to scikit-learn itself.
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["load_bundled", "sklearn_data_dir"]


def sklearn_data_dir() -> Path | None:
    """``<site-packages>/sklearn/datasets/data`` of the installed scikit-learn, or None; never imports sklearn."""
    try:
        spec = importlib.util.find_spec("sklearn")
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        return None
    return Path(locations[0]) / "datasets" / "data"


def _csv_data(path: Path) -> np.ndarray:
    # sklearn.datasets._base.load_csv_data: header "n_samples,n_features,target names...", then features + target
    with path.open("r", encoding="utf-8") as csv_file:
        data_file = csv.reader(csv_file)
        temp = next(data_file)
        n_samples = int(temp[0])
        n_features = int(temp[1])
        data = np.empty((n_samples, n_features))
        for i, ir in enumerate(data_file):
            data[i] = np.asarray(ir[:-1], dtype=np.float64)
    return data


def _gzip_csv_data(path: Path, **kwargs: Any) -> np.ndarray:
    # sklearn.datasets._base.load_gzip_compressed_csv_data (encoding "utf-8")
    with path.open("rb") as compressed_file:
        text = gzip.open(compressed_file, mode="rt", encoding="utf-8")
        return np.loadtxt(text, **kwargs)


def _wine(directory: Path, arguments: Mapping[str, Any]) -> np.ndarray | None:
    return None if arguments else _csv_data(directory / "wine_data.csv")


def _breast_cancer(directory: Path, arguments: Mapping[str, Any]) -> np.ndarray | None:
    return None if arguments else _csv_data(directory / "breast_cancer.csv")


def _digits(directory: Path, arguments: Mapping[str, Any]) -> np.ndarray | None:
    n_class = arguments.get("n_class", 10)
    if set(arguments) - {"n_class"} or type(n_class) is not int or not 1 <= n_class <= 10:
        return None
    data = _gzip_csv_data(directory / "digits.csv.gz", delimiter=",")
    target = data[:, -1].astype(int, copy=False)
    flat_data = data[:, :-1]
    if n_class < 10:
        flat_data = flat_data[target < n_class]
    return flat_data


def _diabetes(directory: Path, arguments: Mapping[str, Any]) -> np.ndarray | None:
    # scaled=True (scikit-learn's default) goes through sklearn.preprocessing.scale: left to scikit-learn
    if set(arguments) - {"scaled"} or arguments.get("scaled", True) is not False:
        return None
    return _gzip_csv_data(directory / "diabetes_data_raw.csv.gz")


_READERS = {
    "load_wine": _wine,
    "load_breast_cancer": _breast_cancer,
    "load_digits": _digits,
    "load_diabetes": _diabetes,
}


def load_bundled(loader: str, arguments: Mapping[str, Any]) -> np.ndarray | None:
    """``sklearn.datasets.<loader>(**arguments).data`` as float64, read from the installed files without importing
    scikit-learn; bit-identical to scikit-learn's (a test checks it).

    Parameters
    ----------
    loader : str
        ``load_wine``, ``load_breast_cancer``, ``load_digits`` (argument ``n_class``) or ``load_diabetes``
        (only ``scaled=False``).
    arguments : Mapping
        The loader's keyword arguments.

    Returns
    -------
    numpy.ndarray or None
        The ``(n, d)`` float64 matrix, or None when this case is not reproduced here (unknown loader or argument,
        scikit-learn not installed, a data file missing): then call scikit-learn.
    """
    reader = _READERS.get(loader)
    directory = sklearn_data_dir()
    if reader is None or directory is None:
        return None
    try:
        data = reader(directory, arguments)
    except OSError:  # a missing or unreadable file: another layout, left to scikit-learn
        return None
    return None if data is None else np.asarray(data, dtype=np.float64)
