"""Records larger than memory (issue 62): ``ddppm fit`` on a folder of Parquet files, its peak resident memory and
its speed against reading the same files with pyarrow alone (docs/release.md, "Records larger than memory").

    .venv/bin/python benchmarks/bench_stream.py                       # 10⁸ rows × 10 columns (8 GB as float64)
    .venv/bin/python benchmarks/bench_stream.py --rows 10000000 --folder /tmp/rows

The data set: ``--rows`` records of ``--columns`` features ``N(50, C)`` (a spiked correlation, as
``bench_release.py``), written once into ``--folder`` as ten uncompressed Parquet files of row groups of 10⁶ rows
(kept for later runs; delete it yourself). Then, each in a fresh process under ``/usr/bin/time -v``:

* **pyarrow alone**: pyarrow reads every batch of every file and turns it into a float64 array, as ``ddppm fit``
  reads them (``ParquetFile.iter_batches``, no pre-buffering; ``pyarrow.dataset``'s defaults held 3.5 GB);
* **ddppm fit**: ``ddppm fit FOLDER`` (AnalyzeGauss, ε = 1, δ = 10⁻⁹, k = 2, bounds 50 ± 8 per feature), which
  reads the files once per pass (the count comes from the metadata).

It prints the seconds and the peak resident memory of each, the passes, and the fit's speed per pass against
pyarrow's one read (seconds of one read × passes / seconds of the fit): the issue's target is at least 80 %, and a
peak under 1 GB.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PYTHON = ROOT / ".venv" / "bin" / "python"
GROUP = 1_000_000
READ = """
import sys, numpy as np
from pathlib import Path
from ddppm.release.files import as_rows
import pyarrow.parquet as pq
total = 0.0
for path in sorted(Path(sys.argv[1]).glob("*.parquet")):
    for batch in pq.ParquetFile(path, pre_buffer=False).iter_batches(batch_size=65536):
        total += as_rows(batch, "x")[0, 0]
print(total)
"""


def write(folder: Path, rows: int, columns: int, seed: int = 0) -> None:
    """Ten Parquet files of ``rows`` records in all, a row group of 10⁶ at a time (never more in memory)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    basis, _ = np.linalg.qr(rng.standard_normal((columns, columns)))
    spectrum = np.ones(columns)
    spectrum[:2] = [4.0, 2.0]
    covariance = (basis * spectrum) @ basis.T
    sd = np.sqrt(np.diag(covariance))
    factor = np.linalg.cholesky(covariance / np.outer(sd, sd))
    names = [f"x{j}" for j in range(columns)]
    per_file = -(-rows // 10)
    written = 0
    for index in range(10):
        path = folder / f"part-{index:02d}.parquet"
        count = min(per_file, rows - written)
        schema = pa.schema([(name, pa.float64()) for name in names])
        with pq.ParquetWriter(path, schema, compression="none") as writer:
            for start in range(0, count, GROUP):
                block = 50.0 + rng.standard_normal((min(GROUP, count - start), columns)) @ factor.T
                writer.write_table(pa.Table.from_arrays(list(np.clip(block, 42, 58).T), names=names))
        written += count


def timed(command: list[str]) -> tuple[float, float, str]:
    """Seconds and peak resident memory (GB) of ``command`` under ``/usr/bin/time -v``, and its output."""
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - start
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1))
    return seconds, peak_kb / 1e6, done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000_000)
    parser.add_argument("--columns", type=int, default=10)
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "ddppm-bench-stream")
    args = parser.parse_args(argv)
    folder = args.folder / f"{args.rows}x{args.columns}"
    if not (folder / "part-09.parquet").exists():
        start = time.perf_counter()
        write(folder, args.rows, args.columns)
        print(f"wrote {args.rows:.3g} × {args.columns} into {folder} in {time.perf_counter() - start:.0f} s")
    size = sum(p.stat().st_size for p in folder.glob("*.parquet")) / 1e9
    read_s, read_gb, _ = timed([str(PYTHON), "-c", READ, str(folder)])
    with tempfile.TemporaryDirectory() as scratch:
        bounds = Path(scratch) / "bounds.json"  # YAML's superset: JSON
        bounds.write_text(json.dumps({"source": "the simulation's design: 50 ± 8", "all_features": [42, 58]}))
        out = Path(scratch) / "release.json"
        fit_s, fit_gb, _ = timed([str(ROOT / ".venv" / "bin" / "ddppm"), "fit", str(folder), "--bounds", str(bounds),
                                  "--k", "2", "--eps", "1", "--delta", "1e-9", "--method", "analyze_gauss",
                                  "--out", str(out)])  # fmt: skip
        release = json.loads(out.read_text())
    passes = 1 + sum(1 for r in release["privacy"]["releases"] if "squared" not in r["stage"])
    print(f"{args.rows:.3g} rows × {args.columns} ({size:.1f} GB of Parquet):")
    print(f"  pyarrow alone, one read: {read_s:.1f} s, peak {read_gb:.2f} GB")
    print(f"  ddppm fit: {fit_s:.1f} s, peak {fit_gb:.2f} GB, {passes} passes (one per noisy statistic, one for the "
          f"clipped count); {fit_s / passes:.1f} s per pass = {read_s * passes / fit_s:.0%} of pyarrow's speed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
