"""Time of ``PrivatePCA(method="auto")``: a first fit (the advisor's simulation runs) and a cached fit (it does not).

The issue's target: a first fit at n ≤ 10⁵, d ≤ 50 under 5 s on 2 cores; a second fit of the same public shape costs
no simulation (also in another process: the cache is on disk). Each shape's first fit runs in a fresh cache directory
(a temporary ``DDPPM_CACHE_DIR``), then the same fit again in this process (the in-process cache), then once more in a
fresh process reading the disk cache. Prints the times and the choice. Run from the repository root:
``.venv/bin/python benchmarks/bench_auto.py`` (``--quick``: the issue's shape only).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

import numpy as np

SHAPES = [
    {"n": 100_000, "d": 50, "trust": "central", "parties": 1},
    {"n": 100_000, "d": 50, "trust": "central", "parties": 16},
    {"n": 100_000, "d": 50, "trust": "secure_aggregation", "parties": 8},
    {"n": 100_000, "d": 50, "trust": "local", "parties": 8},
    {"n": 10_000, "d": 20, "trust": "local", "parties": 4},
]
TARGET_SECONDS = 5.0
ONE_FIT = """
import sys, time
import numpy as np
from ddppm import PrivatePCA
n, d, trust, parties = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
X = np.random.default_rng(0).standard_normal((n, d))
bounds = {"source": "benchmark: standard normal records, bounds of 8 sd", "features": [[-8.0, 8.0]] * d}
start = time.perf_counter()
model = PrivatePCA(2, 5, 1e-6, bounds, trust=trust, method="auto", noise="simulation", random_state=0)
model.fit(X, parties=np.arange(n) % parties)
print(f"{time.perf_counter() - start:.3f} {model.privacy_.method}")
"""


def fit_in_process(n: int, d: int, trust: str, parties: int) -> tuple[float, str, str]:
    """One fit of the benchmark's records: seconds, the method chosen and where its choice came from."""
    from ddppm import PrivatePCA

    X = np.random.default_rng(0).standard_normal((n, d))
    bounds = {"source": "benchmark: standard normal records, bounds of 8 sd", "features": [[-8.0, 8.0]] * d}
    start = time.perf_counter()
    model = PrivatePCA(2, 5, 1e-6, bounds, trust=trust, method="auto", noise="simulation", random_state=0)
    model.fit(X, parties=np.arange(n) % parties)
    seconds = time.perf_counter() - start
    return seconds, model.privacy_.method, model.privacy_.method_choice.rsplit("answer ", 1)[-1]


def fit_in_new_process(n: int, d: int, trust: str, parties: int) -> str:
    """The same fit in a fresh Python process (the disk cache only): its time and choice as printed."""
    command = [sys.executable, "-c", ONE_FIT, str(n), str(d), trust, str(parties)]
    return subprocess.run(command, capture_output=True, text=True, check=True, env=os.environ).stdout.strip()


if __name__ == "__main__":
    shapes = SHAPES[:1] if "--quick" in sys.argv else SHAPES
    import ddppm.release.auto  # noqa: F401  (the imports' time is not the simulation's)

    for shape in shapes:
        with tempfile.TemporaryDirectory() as directory:
            os.environ["DDPPM_CACHE_DIR"] = directory
            first, method, source = fit_in_process(**shape)
            second, again, cached = fit_in_process(**shape)
            other = fit_in_new_process(**shape)
        print(f"{shape}: first fit {first:.2f} s ({first / TARGET_SECONDS:.2f} of the {TARGET_SECONDS:g} s target; "
              f"{method}, {source}); cached fit {second:.2f} s ({again}, {cached}); in a new process {other} s")
