"""The party's SuperNode entry (ddppm.federation.supernode): Flower's own SuperNode, its waits capped."""

from __future__ import annotations

import pytest

pytest.importorskip("flwr", reason="the federation extra installs Flower")


def test_the_supernode_entry_caps_flowers_waits(monkeypatch):
    """``python -m ddppm.federation.supernode`` runs Flower's SuperNode with its main loop's sleeps capped."""
    import importlib
    import time

    import flwr.supernode.start_client_internal as internal

    from ddppm.federation import supernode

    waited = {}

    def fake_supernode() -> None:
        started = time.monotonic()
        internal.time.sleep(3)  # Flower's wait after an empty poll
        waited["seconds"] = time.monotonic() - started

    cli = importlib.import_module("flwr.supernode.cli.flower_supernode")  # the module, not the function
    monkeypatch.setattr(cli, "flower_supernode", fake_supernode)
    monkeypatch.setattr(internal, "time", internal.time)  # restored after the test
    monkeypatch.setenv("DDPPM_SUPERNODE_POLL", "0.05")
    assert supernode.main(["--insecure"]) == 0
    assert waited["seconds"] < 1.0
