"""Answer time of ``ddppm advise`` (the issue's target: under 60 s for n ≤ 10⁵ and d ≤ 100 on 2 cores).

Prints the time of each shape and its ratio to the 60 s target. Run from the repository root:
``.venv/bin/python benchmarks/bench_advise.py``.
"""

from __future__ import annotations

import time

from ddppm.advise import advise

SHAPES = [
    {"n": 10_000, "d": 20, "m": 8, "trust": "local"},
    {"n": 100_000, "d": 100, "m": 16, "trust": "local"},
    {"n": 100_000, "d": 100, "m": 16, "trust": "central"},
]
TARGET_SECONDS = 60.0

if __name__ == "__main__":
    for shape in SHAPES:
        start = time.perf_counter()
        members, facts = advise(eps=2.0, delta=1e-5, k=1, **shape)
        seconds = time.perf_counter() - start
        print(f"{shape}: {seconds:.1f} s ({seconds / TARGET_SECONDS:.2f} of the target), {facts['runs']} data sets, "
              f"best {facts['best']}, set {list(members['method'])}")
