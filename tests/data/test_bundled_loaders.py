"""scikit-learn's bundled data sets read without importing scikit-learn (ddppm.data.bundled) are bit for bit
scikit-learn's own, carry the same meta, and fall back to scikit-learn where the files are not found."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sklearn
import sklearn.datasets as skd

import ddppm.data.bundled as bundled
import ddppm.data.datasets as datasets_module
from ddppm.data import load_dataset
from ddppm.data.specs import dataset_specs

SKLEARN_SETS = {name: spec for name, spec in dataset_specs().items() if spec.sklearn_loader}


def _sklearn_matrix(loader: str, arguments: dict) -> np.ndarray:
    return np.asarray(getattr(skd, loader)(**arguments).data, dtype=np.float64)


def _assert_bit_identical(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype == np.float64
    assert got.shape == want.shape
    assert np.array_equal(got, want)
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()  # also -0.0, NaN payloads


def test_every_paper_and_task_set_is_covered() -> None:
    assert set(SKLEARN_SETS) == {"wine", "diabetes", "breast_cancer", "digits"}


@pytest.mark.parametrize("name", sorted(SKLEARN_SETS))
def test_bundled_matrix_is_sklearns(name: str) -> None:
    spec = SKLEARN_SETS[name]
    got = bundled.load_bundled(spec.sklearn_loader, spec.sklearn_arguments)
    assert got is not None, f"{name}: not read from the bundled files"
    _assert_bit_identical(got, _sklearn_matrix(spec.sklearn_loader, spec.sklearn_arguments))


@pytest.mark.parametrize("n_class", [1, 3, 10])
def test_digits_n_class_is_sklearns(n_class: int) -> None:
    got = bundled.load_bundled("load_digits", {"n_class": n_class})
    assert got is not None
    _assert_bit_identical(got, _sklearn_matrix("load_digits", {"n_class": n_class}))


@pytest.mark.parametrize("name", sorted(SKLEARN_SETS))
def test_load_dataset_meta_and_matrix_match_the_sklearn_route(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = load_dataset(name)
    monkeypatch.setattr(datasets_module, "load_bundled", lambda loader, arguments: None)
    slow = load_dataset(name)
    assert fast.meta == slow.meta
    assert fast.meta["sklearn_version"] == sklearn.__version__
    assert fast.meta["origin"].startswith(f"sklearn.datasets.{SKLEARN_SETS[name].sklearn_loader}(")
    _assert_bit_identical(fast.matrix, slow.matrix)


def test_load_dataset_does_not_import_sklearn() -> None:
    code = (
        "import sys\n"
        "from ddppm.data.datasets import load_dataset\n"
        f"for name in {sorted(SKLEARN_SETS)!r}:\n"
        "    load_dataset(name)\n"
        "    assert 'sklearn' not in sys.modules, name\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_data_dir_is_found_without_importing_sklearn() -> None:
    code = (
        "import sys\n"
        "from ddppm.data.bundled import sklearn_data_dir\n"
        "d = sklearn_data_dir()\n"
        "assert d is not None and (d / 'wine_data.csv').is_file(), d\n"
        "assert 'sklearn' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr


def test_unreproduced_arguments_are_left_to_sklearn() -> None:
    assert bundled.load_bundled("load_diabetes", {}) is None  # scaled=True needs sklearn.preprocessing.scale
    assert bundled.load_bundled("load_diabetes", {"scaled": True}) is None
    assert bundled.load_bundled("load_wine", {"as_frame": True}) is None
    assert bundled.load_bundled("load_digits", {"n_class": 0}) is None
    assert bundled.load_bundled("load_iris", {}) is None


@pytest.mark.parametrize("name", sorted(SKLEARN_SETS))
def test_missing_files_fall_back_to_sklearn(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = SKLEARN_SETS[name]
    monkeypatch.setattr(bundled, "sklearn_data_dir", lambda: tmp_path / "no-such-dir")
    assert bundled.load_bundled(spec.sklearn_loader, spec.sklearn_arguments) is None
    ds = load_dataset(name)
    assert ds.meta["sklearn_version"] == sklearn.__version__
    _assert_bit_identical(ds.matrix, _sklearn_matrix(spec.sklearn_loader, spec.sklearn_arguments))
