"""Data sets: loaders (scikit-learn copies, pinned URLs, seeded synthetic stand-ins) and normalisation."""

from ddppm.data.datasets import (
    DATASETS,
    LABELS,
    NORMALIZATIONS,
    PAPER_SHAPES,
    SHAPES,
    SOURCES,
    Dataset,
    check_unit_ball,
    load_dataset,
    matrix_sha256,
    normalize,
)
from ddppm.data.sources import download, read_numeric_table
from ddppm.data.synthetic import (
    GraphSignal,
    ami_synthetic,
    heavy_tailed,
    sbm_graph_signal,
    sbm_graph_signal_parts,
    spiked_synthetic,
)

__all__ = [
    "DATASETS",
    "LABELS",
    "NORMALIZATIONS",
    "PAPER_SHAPES",
    "SHAPES",
    "SOURCES",
    "Dataset",
    "GraphSignal",
    "ami_synthetic",
    "check_unit_ball",
    "download",
    "heavy_tailed",
    "load_dataset",
    "matrix_sha256",
    "normalize",
    "read_numeric_table",
    "sbm_graph_signal",
    "sbm_graph_signal_parts",
    "spiked_synthetic",
]
