"""Progress lines for long jobs: counts done out of the total and the elapsed time, in the job's log."""

from __future__ import annotations

import logging
import time

LOGGER = logging.getLogger("ddppm")


class Progress:
    """Log ``"<what>: <done>/<total> <unit> done, <elapsed> s elapsed"`` at most every ``every`` seconds.

    The first and the last step always log, so even a short job says what it did. Logging goes to the
    ``ddppm`` logger, which the workflow's scripts send to the rule's ``log:`` file.

    Examples
    --------
    >>> progress = Progress("coarse calibration", total=3, unit="candidates")
    >>> for _ in range(3):
    ...     progress.step()
    """

    def __init__(self, what: str, total: int, unit: str = "steps", every: float = 10.0, extra: str = "") -> None:
        self.what, self.total, self.unit, self.every, self.extra = what, int(total), unit, float(every), extra
        self.done = 0
        self.start = self._last = time.perf_counter()

    def step(self, n: int = 1, note: str = "") -> None:
        """Count ``n`` more done; log when it is the first, the last, or ``every`` seconds since the last line."""
        self.done += n
        now = time.perf_counter()
        if self.done == n or self.done >= self.total or now - self._last >= self.every:
            self._last = now
            tail = f"; {note}" if note else (f"; {self.extra}" if self.extra else "")
            LOGGER.info(
                "%s: %d/%d %s done, %.1f s elapsed%s",
                self.what,
                self.done,
                self.total,
                self.unit,
                now - self.start,
                tail,
            )

    @property
    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.perf_counter() - self.start
