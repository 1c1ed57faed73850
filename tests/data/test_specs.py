"""One record per data set (ddppm.data.specs): the library's tables are derived from the records, every record
loads to its declared shape with its declared bounds, and a new record is all a new data set needs."""

from __future__ import annotations

import numpy as np
import pytest

import ddppm.data.specs as specs
from ddppm.core.errors import ConfigError
from ddppm.data import DATASETS, LABELS, PAPER_SHAPES, SHAPES, load_dataset
from ddppm.data.public_prep import public_bounds


def test_the_tables_are_the_records():
    records = specs.dataset_specs()
    assert DATASETS == tuple(records)
    assert SHAPES == {name: spec.shape for name, spec in records.items()}
    assert LABELS == {name: spec.label for name, spec in records.items()}
    assert set(PAPER_SHAPES) == {"diabetes", "breast_cancer", "wine", "ami_synthetic", "sbm_graph_signal"}


@pytest.mark.parametrize("name", ["diabetes", "wine", "digits", "ami_synthetic", "sbm_graph_signal"])
def test_every_record_loads_to_its_shape_with_its_bounds(name):
    spec = specs.dataset_specs()[name]
    data = load_dataset(name, source="default")
    assert data.matrix.shape == spec.shape
    assert public_bounds(name, spec.shape[1]).kind == spec.public_bounds["kind"]
    assert bool(data.meta.get("stand_in")) == bool(spec.stand_in)


def test_a_new_record_is_a_new_data_set(tmp_path, monkeypatch):
    """Appending one record (a seeded generator, its bounds) makes a loadable spec: nothing else to edit."""
    extra = """
toy_gaussian:
  label: "Toy Gaussian"
  shape: [300, 4]
  papers: []
  loader: {generator: "spiked_synthetic"}
  public_bounds: {kind: construction, source: "a test: Gaussian rows", all_features: [-8, 8]}
"""
    copy = tmp_path / "datasets.yaml"
    copy.write_text(specs.SPECS_FILE.read_text() + extra)
    monkeypatch.setattr(specs, "SPECS_FILE", copy)
    specs.dataset_specs.cache_clear()
    try:
        spec = specs.dataset_specs()["toy_gaussian"]
        X = spec.generator(n=300, d=4, spikes=(3.0,), seed=0)
        assert X.shape == spec.shape and spec.public_bounds["all_features"] == [-8, 8]
    finally:
        specs.dataset_specs.cache_clear()


def test_a_bad_record_names_its_key():
    with pytest.raises(ConfigError, match=r"datasets\.yaml: x\.loader"):
        specs.DatasetSpec("x", "X", (3, 2), (), {"sklearn": "a", "generator": "b"})
    with pytest.raises(ConfigError, match=r"x\.papers"):
        specs.DatasetSpec("x", "X", (3, 2), ("thesis",), {"sklearn": "load_wine"})
    with pytest.raises(ConfigError, match=r"x\.loader\.generator"):
        specs.DatasetSpec("x", "X", (3, 2), (), {"generator": "nope"})
    assert np.isfinite(specs.dataset_specs()["spiked_synthetic"].public_bounds["row_norm"])
