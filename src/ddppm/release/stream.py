"""The release of rows read a block at a time: records larger than memory, in files or on a Dask cluster
(docs/release.md, "Records larger than memory").

The release's statistics are all sums over rows: the private box's histograms, the rows' sums and squares, the
histogram of the centred rows' norms, and the second moment ``XᵀX`` of the standardised rows that a streaming
method releases a noisy function of (:attr:`~ddppm.common_task.base.CommonTaskMethod.streams`). A
:class:`StreamingHolder` is the one party of the federation's own route
(:func:`~ddppm.federation.coordinator.coordinate`) whose statistic at each step is the sum of its blocks'
statistics (:func:`~ddppm.federation.party.step_statistic`, the functions every party runs), with the step's noise
drawn once, on the total, never per block. The released bits are then those of the in-memory fit, up to the order
in which the rows' sums are added (tested to 1e-12).

**Passes over the rows**, each a streaming pass: one to count them if the source does not know its count (a
Parquet file does: its metadata); one per round of the private box (0–3, a public rule of n, d and ε); one for the
sums; one for the norms' histogram when the clipping radius is searched; one for ``XᵀX``. Every later step of the
method (a power method's iterations) works on that d × d matrix. The methods that release each row (``ldp``) or
need the rows themselves (``dp_pca``, ``cai_xia_zha``, ``amin``) cannot stream and say so.

Sources (:func:`row_blocks`): an array (its blocks), a list of arrays, a function returning a fresh iterable of
blocks (called once per pass), a Parquet file or a folder of them, or a CSV file (both read with
pyarrow a batch at a time), or a ``dask.array`` (:mod:`ddppm.release.dask_rows`: each statistic is summed
on the cluster by a tree reduction and only the d- or d²-sized totals reach the client).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ddppm.core.errors import ConfigError, DataError
from ddppm.data.public_prep import prepare_public
from ddppm.federation.agreement import Agreement
from ddppm.federation.party import STATISTICS, Party, reboxed, standardised, step_statistic
from ddppm.federation.public import PublicRelease
from ddppm.release.rows import BLOCK_ROWS, RowBlocks


@dataclass(frozen=True)
class HolderPlan(Agreement):
    """The public inputs of a release by one holder of every row (an :class:`Agreement` with one party and any
    trust level, the curator's included): what :class:`StreamingHolder` and the federation's route read."""

    def _check_holders(self) -> None:
        if len(self.sizes) != 1 or self.sizes[0] < 2:
            raise ConfigError(f"a streamed release has one holder of two or more rows; got sizes {list(self.sizes)}")


def row_blocks(source: Any, block_rows: int = BLOCK_ROWS) -> Any:
    """The rows of ``source`` (module docstring) as :class:`RowBlocks` (or Dask's)."""
    if type(source).__module__.startswith("dask."):
        from ddppm.release.dask_rows import DaskRows

        return DaskRows(source)
    if isinstance(source, RowBlocks) or hasattr(source, "total") and hasattr(source, "shape"):
        return source
    if isinstance(source, str | Path):
        from ddppm.release.files import file_blocks

        return file_blocks(Path(source))
    if isinstance(source, np.ndarray):
        if source.ndim != 2:
            raise DataError("records: a 2-D array (one record per row)")
        n = source.shape[0]
        return RowBlocks(lambda: (source[i : i + block_rows] for i in range(0, n, block_rows)), "records", n,
                         d=source.shape[1])  # fmt: skip
    if isinstance(source, list | tuple):
        if any(np.ndim(block) != 2 for block in source):
            raise DataError("records: every block of the list must be a 2-D array (one record per row)")
        return RowBlocks(lambda: iter(source), "records", sum(np.shape(block)[0] for block in source))
    if callable(source):
        return RowBlocks(source, "records")
    raise ConfigError(f"records: {type(source).__name__} is not a source of rows; give an array, a list of arrays, "
                      "a function returning an iterable of blocks (called once per pass), a Parquet or CSV path, or "
                      "a dask array")  # fmt: skip


def _block_statistic(block: np.ndarray, step: str, public: PublicRelease, message: dict[str, Any]) -> np.ndarray:
    """One block's statistic of ``step``: the party's own function on the block's publicly prepared rows."""
    Z = prepare_public(block, public.bounds, public.normalization)
    return step_statistic(step, Z if step == "box_counts" else reboxed(Z, public, message), public, message)


def _block_gram(block: np.ndarray, public: PublicRelease, message: dict[str, Any]) -> np.ndarray:
    """One block's ``ZᵀZ`` of its standardised rows."""
    rows = standardised(prepare_public(block, public.bounds, public.normalization), public, message)
    return rows.T @ rows


class StreamingHolder(Party):
    """The one holder of every row, read from ``rows`` (:class:`RowBlocks` or Dask's) a pass per step (module
    docstring); noise and streams as :class:`~ddppm.federation.party.Party`'s, drawn once per step."""

    def __init__(self, rows: Any, plan: HolderPlan, d: int) -> None:
        self.index, self.agreement, self.source = 0, plan, rows
        self.public = PublicRelease(plan, d)
        self.ledger = None  # the estimator reserves the release before the route runs
        self._prepared: dict[str, Any] = {}
        self._streams: dict[str, Any] = {}
        self._saved = {"charged": True, "streams": {}}
        self._message: dict[str, Any] | None = None
        self.passes = 0

    @property
    def rows(self) -> np.ndarray:
        raise ConfigError(f"method {self.public.method.name} releases each row, which a streamed fit never holds; "
                          f"methods that stream: {streaming_methods()}")  # fmt: skip

    def gram(self) -> np.ndarray:
        if "gram" not in self._prepared:
            public, message = self.public, self._message
            self.passes += 1
            self._prepared["gram"] = self.source.total(lambda block: _block_gram(block, public, message))
        return self._prepared["gram"]

    def _statistic(self, step: str, message: dict[str, Any]) -> np.ndarray:
        public = self.public
        self.passes += 1
        return self.source.total(lambda block: _block_statistic(block, step, public, message))

    def _prepare_method(self, message: dict[str, Any]) -> None:
        if self._message is None:
            self._message = message


class Alone:
    """The federation's transport for one holder: every step is its own answer (nobody else sees a partial sum,
    so the route runs as under secure aggregation)."""

    secure, parties = True, 1

    def __init__(self, holder: StreamingHolder) -> None:
        self.holder = holder

    def sum(self, step: str, message: dict[str, Any]) -> np.ndarray:
        return self.holder.answer(step, message)

    def each(self, step: str, message: dict[str, Any]) -> list[np.ndarray]:
        return [self.holder.answer(step, message)]


def stream_route(holder: StreamingHolder) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, list[int]]]:
    """The release's route (:func:`~ddppm.federation.coordinator.coordinate`) over the holder's passes: the
    components (d × k), the mean and the scale in the records' units, and the features whose statistics sit on a
    bound or the floor (:attr:`~ddppm.release.certificate.Certificate.statistics`)."""
    from ddppm.federation.coordinator import coordinate

    release = coordinate(Alone(holder), holder.agreement, holder.public.d)
    return release.components.T, release.mean, release.scale, release.certificate.statistics


def streaming_methods() -> list[str]:
    """The methods that run on rows read a block at a time."""
    from ddppm.methods import common_task_methods

    return sorted(name for name, method in common_task_methods().items() if getattr(method, "streams", False))


__all__ = ["STATISTICS", "Alone", "HolderPlan", "RowBlocks", "StreamingHolder", "row_blocks", "stream_route",
           "streaming_methods"]
