"""A federated release on loopback against the one-process fit: time, and the bytes each party sends
(docs/federation.md, "Speed").

    .venv/bin/python benchmarks/bench_federation.py                      # 4 parties × 10⁵ rows, d = 50, k = 2
    .venv/bin/python benchmarks/bench_federation.py --rows 20000 --d 10 --flower-poll

The conventional method at trust ``local`` (or ``--method cape --trust secure_aggregation``: through SecAgg+),
secure noise, the deployment engine with TLS and SuperNode keys (the tests' harness, ``tests/federation/
loopback.py``), each party as ``ddppm party`` runs it (``--per-message``: stock SuperNodes, a ClientApp process per
message). Times: the one-process ``PrivatePCA.fit(X, parties=...)``; Flower's start-up (SuperLink ready, keys
registered, every SuperNode connected, rows parsed); the run (from ``flwr run`` to the release file), split as the
coordinator times it (ServerApp launch, the parties' hello, the release's private steps). The SuperNodes poll
every 0.1 s unless ``--flower-poll`` (Flower 1.42's hard-coded 3 s). Bytes: each party's reply payloads, as the
coordinator counts them (float64 arrays; without Flower's framing). Data: a spiked Gaussian, N(0, C) in d
dimensions with eigenvalues 4, 2, then 1 in a random basis, declared bounds ± 8 (twice ± 4 sd; public, from the
design).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ddppm import PrivatePCA  # noqa: E402
from ddppm.federation.agreement import Agreement  # noqa: E402
from tests.federation import loopback  # noqa: E402


def records(parties: int, rows: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    basis, _ = np.linalg.qr(rng.standard_normal((d, d)))
    spectrum = np.ones(d)
    spectrum[:2] = [4.0, 2.0]
    return (rng.standard_normal((parties * rows, d)) * np.sqrt(spectrum)) @ basis.T


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parties", type=int, default=4)
    parser.add_argument("--rows", type=int, default=100_000, help="rows per party")
    parser.add_argument("--d", type=int, default=50)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--eps", type=float, default=1.0)
    parser.add_argument("--method", default="conventional")
    parser.add_argument("--trust", default="local", choices=("local", "secure_aggregation"))
    parser.add_argument("--flower-poll", action="store_true", help="Flower's own 3 s poll, not the tests' 0.1 s")
    parser.add_argument("--per-message", action="store_true",
                        help="Flower's process per message (stock SuperNodes), not the parties' warm executors")
    args = parser.parse_args(argv)
    X = records(args.parties, args.rows, args.d)
    sizes = [args.rows] * args.parties
    labels = np.repeat(np.arange(args.parties), args.rows)
    bounds = {"source": "the simulation's design: ± 4 sd, twice", "all_features": [-8.0, 8.0]}
    delta = 1e-9
    started = time.perf_counter()
    PrivatePCA(args.k, args.eps, delta, bounds, trust=args.trust, method=args.method).fit(X, parties=labels)
    one_process = time.perf_counter() - started
    agreement = Agreement(args.k, args.eps, delta, bounds, sizes, args.method, trust=args.trust)
    if args.flower_poll:
        os.environ["DDPPM_SUPERNODE_POLL"] = "3"  # Flower's own waits (ddppm.federation.supernode)
    with tempfile.TemporaryDirectory(prefix="bench-federation-") as folder:
        root = Path(folder)
        configs = []
        for j, block in enumerate(np.split(X, args.parties)):
            (root / f"party{j}").mkdir()
            pd.DataFrame(block, columns=[f"x{i}" for i in range(args.d)]).to_csv(root / f"party{j}" / "rows.csv",
                                                                               index=False)  # fmt: skip
            (root / f"party{j}" / "agreement.json").write_text(json.dumps(agreement.to_dict()))
            configs.append({"data-path": str(root / f"party{j}" / "rows.csv"),
                            "agreement-path": str(root / f"party{j}" / "agreement.json"), "party-index": j})
        (root / "agreement.json").write_text(json.dumps(agreement.to_dict()))
        started = time.perf_counter()
        with loopback.federation(root / "flower", tls=True) as running:
            nodes = []
            for j, config in enumerate(configs):
                private, public = loopback.make_node_key(root / "keys", f"party{j}")
                running.register(public)
                nodes.append(running.supernode(f"party{j}", config, key=private, warm=not args.per_message))
            for node in nodes:
                node.wait_for("SuperNode ID", 120)
            start_up = time.perf_counter() - started
            out = root / "release.json"
            started = time.perf_counter()
            release = running.run({"agreement-path": str(root / "agreement.json"), "out-path": str(out),
                                   "timeout": 600.0}, out, timeout=1200)  # fmt: skip
            run = time.perf_counter() - started
    if "error" in release:
        print(release["error"], file=sys.stderr)
        return 1
    sent = release["transport"]["payload_bytes_per_party"]
    seconds = release["transport"]["seconds"]
    launch = run - seconds["connect"] - seconds["release"]
    parties = "Flower's process per message" if args.per_message else "warm parties (ddppm party)"
    print(f"{args.parties} parties × {args.rows} rows, d = {args.d}, k = {args.k}, {args.method} at trust "
          f"{args.trust}, TLS, {parties}, "
          f"{'Flower poll 3 s' if args.flower_poll else 'poll 0.1 s'}")
    print(f"one process: {one_process:.2f} s; Flower start-up {start_up:.1f} s (SuperLink, keys, SuperNodes, rows "
          f"parsed); the run {run:.1f} s = ServerApp launch {launch:.1f} s + connect {seconds['connect']:.1f} s "
          f"+ release {seconds['release']:.1f} s ({seconds['release'] / one_process:.1f}× the one-process fit; "
          f"run: {run / one_process:.1f}×), {release['transport']['steps']} steps")
    print(f"payload bytes per party: {sent[0]:,} ({sent[0] / 1e3:.1f} kB; the rows would be "
          f"{args.rows * args.d * 8 / 1e6:.0f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
