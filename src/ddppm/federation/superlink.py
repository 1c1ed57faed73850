"""The coordinator's SuperLink with its port closed to strangers (docs/federation.md, "The port"): Flower 1.42's
own SuperLink app, served by uvicorn on two sockets, its Control and runtime APIs on 127.0.0.1 only and the
parties' address serving the Fleet API alone. ``ddppm coordinate`` runs it as ``python -m ddppm.federation.superlink``.

It leans on two private names that the lock pins (``flwr`` 1.42, uvicorn): Flower's
``_parse_superlink_lifespan_config`` (its own checks of its arguments) and uvicorn's ``Server._serve`` (two servers
in one event loop; ``serve()`` installs signal handlers of its own, one server's replacing the other's). A test
(``tests/federation/adversary/test_cli_port.py``) fails if either changes behaviour.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import Any

FLEET_PATHS = ("/v1/fleet/", "/health")
"""The only requests the parties' port serves: Flower's Fleet API (what a SuperNode calls) and its health check."""


class FleetOnly:
    """An ASGI app serving only :data:`FLEET_PATHS` of ``app``; every other request (Flower's Control API, which has
    no account authentication, and its runtime API) is answered 404 without reaching Flower."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan" or str(scope.get("path", "")).startswith(FLEET_PATHS):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-type", b"text/plain"), (b"content-length", b"9")]})  # fmt: skip
            await send({"type": "http.response.body", "body": b"not found"})


def serve_superlink(argv: list[str]) -> int:
    """Flower 1.42's SuperLink with its APIs split across two listening sockets (``ddppm coordinate`` runs it as
    ``python -m ddppm.federation.superlink``).

    Flower 1.42 serves its Control API (``flwr run``, ``flwr supernode register``: no account authentication
    without Flower's enterprise plugins), its runtime API (the ServerApp's) and its Fleet API (the parties') on one
    address, ``--host``/``--port``. Here the whole app listens on 127.0.0.1 at a free port (plain HTTP: only this
    machine reaches it; the port is written to ``--control-port-file``), the ServerApp's SuperExec talking to it
    there; the parties' address, ``--public-host``/``--public-port`` (TLS unless ``--insecure``), serves the Fleet
    API alone (:class:`FleetOnly`), and starts listening only once ``--open-when`` exists: the CLI registers the
    parties' keys first. The port is bound at once, so a busy port fails before anything starts.

    Parameters
    ----------
    argv
        ``--public-host H --public-port P --control-port-file F --open-when G -- FLOWER_ARGUMENTS``; the latter
        are ``flower-superlink``'s (TLS files, ``--enable-supernode-auth``, ``--insecure``), without ``--host``
        and ``--port``.

    Returns
    -------
    int
        0 after SIGTERM or SIGINT.
    """
    import asyncio
    import dataclasses
    import socket

    import flwr.superlink.cli.flower_superlink  # noqa: F401
    import uvicorn
    from flwr.superlink.main import create_app

    flower = sys.modules["flwr.superlink.cli.flower_superlink"]  # the module: its package exports the function
    # of the same name, which `import … as` would bind

    parser = argparse.ArgumentParser(prog="ddppm-superlink")
    parser.add_argument("--public-host", required=True)
    parser.add_argument("--public-port", type=int, required=True)
    parser.add_argument("--control-port-file", type=Path, required=True)
    parser.add_argument("--open-when", type=Path, required=True)
    parser.add_argument("flower", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    rest = [a for a in args.flower if a != "--"]

    host = args.public_host.strip("[]")
    public = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    public.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    public.bind((host, args.public_port))  # bound, not listening: connections are refused until it opens
    control = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    control.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    control.bind(("127.0.0.1", 0))
    control_port = control.getsockname()[1]

    sys.argv = ["flower-superlink", *rest, "--host", "127.0.0.1", "--port", str(control_port)]
    config = flower._parse_superlink_lifespan_config()  # Flower's own checks of its arguments
    tls = {"ssl_certfile": config.ssl_certfile, "ssl_keyfile": config.ssl_keyfile} if config.certificates else {}
    # the loopback side in plain HTTP, its SuperExec told so (Flower derives the SuperExec's TLS from these)
    inner = dataclasses.replace(config, certificates=None, ssl_ca_certfile=None, ssl_certfile=None, ssl_keyfile=None)
    app = create_app(inner, flower.SuperLinkLifespan)
    log_config = flower.get_uvicorn_log_config(flower.console_handler.level)
    loop_server = uvicorn.Server(uvicorn.Config(app, log_config=log_config, access_log=False))
    fleet_server = uvicorn.Server(uvicorn.Config(FleetOnly(app), interface="asgi3", lifespan="off",
                                                 log_config=log_config, access_log=False, **tls))  # fmt: skip

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for number in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(number, stop.set)
        # Server._serve, not serve(): serve() installs its own signal handlers, one server's replacing the other's
        tasks = [asyncio.create_task(loop_server._serve([control]))]
        while not loop_server.started and not tasks[0].done():
            await asyncio.sleep(0.05)
        if loop_server.started:
            args.control_port_file.write_text(f"{control_port}\n")
        while not args.open_when.exists() and not stop.is_set() and not tasks[0].done():
            await asyncio.sleep(0.05)
        if not stop.is_set() and not tasks[0].done():
            tasks.append(asyncio.create_task(fleet_server._serve([public])))
        stopper = asyncio.create_task(stop.wait())
        await asyncio.wait([*tasks, stopper], return_when=asyncio.FIRST_COMPLETED)
        loop_server.should_exit = fleet_server.should_exit = True
        stopper.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(main())
    return 0


if __name__ == "__main__":
    raise SystemExit(serve_superlink(sys.argv[1:]))
