"""Per-cell limits: ``--cell-timeout SECONDS`` and ``--cell-memory-mb MB`` (both off by default).

A cell over a limit fails with one line naming the limit (:class:`CellLimitExceeded`, a
``UserError``: not retried, since it would run as long and grow as large again); the rest of
the run continues. The guard works in the process that runs the cell, so it is the same for
``--jobs 1`` (the main process), a pool worker and a Ray task:

* time: ``SIGALRM`` (``setitimer``) raises in the cell's thread, which must be the main thread
  (it is for all three executors); it fires again every second until the cell ends, so a
  plug-in that swallows exceptions is still stopped;
* memory: a daemon thread reads the process's resident memory every :data:`POLL_S` s and,
  once it has grown by more than the limit since the cell started, signals the cell's thread
  the same way. The growth is counted, not the total, so the limit does not depend on what
  torch and earlier cells already hold.

Both act when the cell's Python code next runs: native code that never returns to Python is
not interrupted, and a single allocation larger than the machine fails (or is killed by the
system) before the poll sees it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

from robustbnn.errors import UserError

__all__ = ["CellLimitExceeded", "CellLimits", "guard", "resident_mb"]

POLL_S = 0.05  # how often the memory guard reads the resident memory
REFIRE_S = 1.0  # after the first alarm, how often it fires again until the cell ends


@dataclasses.dataclass(frozen=True)
class CellLimits:
    """The limits of every cell of a run.

    Attributes:
        timeout_s: Wall-clock seconds a cell may run (None: no limit).
        memory_mb: MiB by which a cell may grow the resident memory of its process (None: no
            limit).
    """

    timeout_s: float | None = None
    memory_mb: int | None = None


class CellLimitExceeded(UserError):
    """A cell ran past ``--cell-timeout`` or grew past ``--cell-memory-mb``."""


def resident_mb() -> float | None:
    """This process's resident memory in MiB (Linux ``/proc``), else None."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


class _Guard:
    """The state of one guarded cell: why it must stop (set by the memory thread)."""

    def __init__(self, limits: CellLimits, what: str) -> None:
        self.limits, self.what = limits, what
        self.active = True
        self.reason: str | None = None
        self.stop = threading.Event()

    def on_alarm(self, signum: int, frame: object) -> None:
        """SIGALRM: raise in the cell's thread (ignored once the cell has ended)."""
        if not self.active:
            return
        if self.reason is None:
            self.reason = (f"{self.what} ran past its time limit of {self.limits.timeout_s:g} s "
                           "(--cell-timeout); raise the limit or make the cell smaller")
        raise CellLimitExceeded(self.reason)

    def watch_memory(self, start: float, main: int) -> None:
        """Signal the cell's thread once resident memory grew past the limit."""
        limit = self.limits.memory_mb
        while not self.stop.wait(POLL_S):
            now = resident_mb()
            if now is not None and now - start > limit:
                self.reason = (f"{self.what} grew its process's memory by {now - start:.0f} MiB, "
                               f"more than its limit of {limit} MiB (--cell-memory-mb); raise "
                               "the limit or make the cell smaller")
                while not self.stop.is_set():  # until the cell's thread has stopped it
                    signal.pthread_kill(main, signal.SIGALRM)
                    self.stop.wait(REFIRE_S)
                return


@contextlib.contextmanager
def guard(limits: CellLimits | None, what: str = "the cell") -> Iterator[None]:
    """Run the body under ``limits``; raise :class:`CellLimitExceeded` past one of them.

    Without limits, or outside the main thread (where no signal can reach), the body runs
    unguarded.

    Args:
        limits: The run's limits.
        what: What runs, for the message.
    """
    if (limits is None or (limits.timeout_s is None and limits.memory_mb is None)
            or threading.current_thread() is not threading.main_thread()):
        yield
        return
    state = _Guard(limits, what)
    previous = signal.signal(signal.SIGALRM, state.on_alarm)
    watcher = None
    try:
        if limits.timeout_s is not None:
            signal.setitimer(signal.ITIMER_REAL, limits.timeout_s, REFIRE_S)
        start = resident_mb()
        if limits.memory_mb is not None and start is not None:
            watcher = threading.Thread(target=state.watch_memory,
                                       args=(start, threading.main_thread().ident),
                                       name="robustbnn-cell-memory", daemon=True)
            watcher.start()
        yield
    finally:
        state.active = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        state.stop.set()
        if watcher is not None:
            watcher.join()
        signal.signal(signal.SIGALRM, previous)

