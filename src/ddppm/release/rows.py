"""Rows a block at a time, readable more than once (:mod:`ddppm.release.stream`): the sums over blocks that a
streamed release is made of, the ledger's fingerprint of the records, and the count of clipped values."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from ddppm.core.errors import DataError

BLOCK_ROWS = 65_536
"""Rows per block when the source is one array (about 50 MB at d = 100)."""


class RowBlocks:
    """Rows a block at a time, readable more than once: ``make()`` returns a fresh iterable of 2-D blocks.
    ``n`` (when the source knows it) spares a counting pass; ``name`` names the source in errors."""

    def __init__(self, make: Callable[[], Iterable[Any]], name: str, n: int | None = None,
                 columns: list[str] | None = None, d: int | None = None) -> None:  # fmt: skip
        self.make, self.name, self._n, self.columns = make, name, n, columns
        self._d: int | None = d

    def blocks(self) -> Iterator[np.ndarray]:
        """The blocks as float64 C arrays, each checked: 2-D, finite, and the same width as the first; a pass that
        does not give the n rows of the first is refused (n fixed the calibration and divides the sums)."""
        rows = 0
        made = self.make()
        try:
            iterator = iter(made)
        except TypeError:
            raise DataError(f"{self.name}: the source gave {type(made).__name__}, not an iterable of blocks (a "
                            "function source must return a fresh iterable of 2-D arrays each time)") from None
        for index, block in enumerate(iterator):
            try:
                array = np.ascontiguousarray(block, dtype=np.float64)
            except (TypeError, ValueError) as error:
                raise DataError(f"{self.name}: block {index} is not numeric ({error})") from None
            if array.ndim != 2:
                raise DataError(f"{self.name}: block {index} is not 2-D (one record per row)")
            if self._d is None:
                self._d = array.shape[1]
            if array.shape[1] != self._d:
                raise DataError(f"{self.name}: block {index} has {array.shape[1]} columns, the first had {self._d}")
            if not np.all(np.isfinite(array)):
                raise DataError(f"{self.name}: block {index} (rows from {rows}) holds NaN, infinite or empty values; "
                                "a private PCA needs every value (impute them with public rules first)")  # fmt: skip
            rows += array.shape[0]
            if array.shape[0]:
                yield array
        if self._n is not None and rows != self._n:
            raise DataError(f"{self.name}: this pass read {rows} rows, the first {self._n}; every pass must read the "
                            "same records (a function source returns a fresh iterable each call; a file may not "
                            "change during the fit). Nothing more is drawn")  # fmt: skip

    def shape(self) -> tuple[int, int]:
        """``(n, d)``: a counting pass (reading only) unless the source knows n and d."""
        if self._n is None or self._d is None:
            self._n = None
            self._n = sum(block.shape[0] for block in self.blocks())
        if self._d is None:
            raise DataError(f"{self.name}: no records")
        return self._n, self._d

    def total(self, statistic: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """``Σ_blocks statistic(block)``, added in the blocks' order."""
        total = None
        for block in self.blocks():
            value = statistic(block)
            total = value if total is None else total + value
        if total is None:
            raise DataError(f"{self.name}: no records")
        return total

    def fingerprint(self) -> str:
        """The ledger's fingerprint of these records (:func:`~ddppm.release.ledger.records_fingerprint`: their
        shape and float64 bytes in order), a pass."""
        digest = hashlib.sha256(f"{self.shape()}".encode())
        for block in self.blocks():
            digest.update(block.tobytes())
        return f"sha256:{digest.hexdigest()}"

    def clipped(self, count: Callable[[np.ndarray], int]) -> int:
        return int(self.total(lambda block: np.array([count(block)]))[0])
