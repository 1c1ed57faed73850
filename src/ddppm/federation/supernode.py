"""A party's Flower SuperNode, asking its SuperLink for messages every 0.1 s (docs/federation.md, "Speed").

Flower 1.42's SuperNode waits a hard-coded 3 s after a pull that found no message, and 0.5 s between checks for
its ClientApp's reply: every step of a release pays up to 3.5 s of waiting on each party. This entry point runs
Flower's own SuperNode (``flower-supernode``, same arguments) with those waits capped at :data:`POLL_SECONDS`
(``DDPPM_SUPERNODE_POLL`` overrides it; ``3`` restores Flower's). A party polls its coordinator ten times a
second while it waits: a few hundred bytes per poll, negligible for the handful of parties of a release.

    python -m ddppm.federation.supernode --superlink HOST:PORT ...   # as flower-supernode
"""

from __future__ import annotations

import os
import sys
import time
import types

POLL_SECONDS = 0.1


def main(argv: list[str] | None = None) -> int:
    import flwr.supernode.start_client_internal as internal
    from flwr.supernode.cli.flower_supernode import flower_supernode

    cap = float(os.environ.get("DDPPM_SUPERNODE_POLL", POLL_SECONDS))
    clock = types.SimpleNamespace(**{name: getattr(time, name) for name in dir(time) if not name.startswith("_")})
    clock.sleep = lambda seconds: time.sleep(min(seconds, cap))
    internal.time = clock  # only the SuperNode's main loop sees the capped sleep
    sys.argv = ["flower-supernode", *(sys.argv[1:] if argv is None else argv)]
    flower_supernode()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
