"""Seeds that depend on *what* a random draw is for, never on how the work is split into jobs.

A Monte-Carlo run is identified by a base seed plus labels such as (dataset, method, ε) and its run
index. Its generator is derived from those alone, so a sweep split into chunks on a cluster draws
exactly the same numbers as one unsharded job.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np


def _label_words(labels: Iterable[object]) -> list[int]:
    text = "|".join(
        repr(float(x)) if isinstance(x, int | float | np.number) and not isinstance(x, bool) else str(x) for x in labels
    )
    digest = hashlib.sha256(text.encode()).digest()
    return [int(w) for w in np.frombuffer(digest[:16], dtype=np.uint32)]


def seed_sequence(base_seed: int, *labels: object) -> np.random.SeedSequence:
    """A SeedSequence determined by ``base_seed`` and the (hashed, order-sensitive) labels."""
    return np.random.SeedSequence(entropy=[int(base_seed), *_label_words(labels)])


def run_seed(base_seed: int, labels: tuple[object, ...], run_index: int) -> int:
    """A 63-bit integer seed for one run, recorded in outputs so any run can be replayed alone."""
    ss = seed_sequence(base_seed, *labels, "run", int(run_index))
    high, low = (int(w) for w in ss.generate_state(2, dtype=np.uint32))
    return ((high << 32) | low) >> 1


def run_generators(base_seed: int, labels: tuple[object, ...], run_indices: Iterable[int]) -> list[np.random.Generator]:
    """One independent generator per run index (see :func:`run_seed`)."""
    return [np.random.default_rng(run_seed(base_seed, labels, r)) for r in run_indices]
