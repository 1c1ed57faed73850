"""A party's journal of the steps it answered, on its own disk beside its ledger (docs/federation.md, "One run is
charged once").

A party's position in the public plan travels with its state between messages (Flower's context, or the warm
party's memory), which Flower saves only after the reply has left. A crash between the two, or two processes
started from one saved state, would reopen a step already answered: its noise drawn again, the replies averaged.
The journal closes that: before a party computes an answer, it records the run's next position here (atomically,
under an exclusive lock, readable by its owner only), and a party whose state is behind its journal refuses the run
(``refused: protocol``). A party without a ledger has no journal (and no durable memory at all: say so to whoever
runs it).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from ddppm.core.io import exclusive_lock, write_text_atomic
from ddppm.federation.plan import Refused

FILE_MODE = 0o600


class StepJournal:
    """The journal beside the ledger at ``ledger_path``: ``.<ledger's name>.steps.json``, one position per run."""

    def __init__(self, ledger_path: str | Path) -> None:
        ledger = Path(ledger_path).resolve()
        self.path = ledger.with_name(f".{ledger.name}.steps.json")

    def position(self, run: str) -> int:
        """The position recorded for ``run`` (0: none)."""
        return int(self._read().get(run, 0))

    def advance(self, run: str, position: int) -> None:
        """Record that ``run`` is at ``position`` (never moves back)."""
        try:
            with self._locked():
                runs = self._read()
                runs[run] = max(int(runs.get(run, 0)), int(position))
                write_text_atomic(self.path, json.dumps(runs, indent=1, sort_keys=True) + "\n", mode=FILE_MODE)
        except OSError as error:
            raise Refused("budget", f"the journal of steps {self.path} cannot be written: {error}") from None

    def _read(self) -> dict[str, int]:
        """The runs' positions; an unreadable journal is refused (``budget``: the party's own files), nothing drawn."""
        try:
            runs = json.loads(self.path.read_text(encoding="utf-8")) if self.path.is_file() else {}
        except (OSError, ValueError) as error:
            raise Refused("budget", f"the journal of steps {self.path} cannot be read: {error}") from None
        if not isinstance(runs, dict) or not all(isinstance(v, int) and not isinstance(v, bool) for v in runs.values()):
            raise Refused("budget", f"{self.path} is not a party's journal of steps")
        return runs

    def _locked(self) -> contextlib.AbstractContextManager[None]:
        return exclusive_lock(self.path.with_name(f"{self.path.name}.lock"))
