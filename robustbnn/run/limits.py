"""Per-cell limits: ``--cell-timeout SECONDS`` and ``--cell-memory-mb MB`` (both off by default).

A cell over a limit fails with one line naming the limit (:class:`CellLimitExceeded`, a
``UserError``: not retried, since it would run as long and grow as large again); the rest of
the run continues. Two guards, one inside the cell's process and one outside it:

* inside (:func:`guard`, in the process that runs the cell: a local worker or a Ray task):
  time by ``SIGALRM`` (``setitimer``), raised in the cell's thread, which must be the main
  thread (it is for every executor), and fired again every second until the cell ends;
  memory by a daemon thread that reads the process's resident memory every :data:`POLL_S` s
  and, once it has grown by more than the limit since the cell started (the growth, not the
  total, so the limit does not depend on what torch and earlier cells already hold), signals
  the cell's thread the same way. A cell stops here when its Python code next runs;
* outside (the local executors, :mod:`robustbnn.run.watched`): with a limit set, every cell
  runs in a worker process (one with ``--jobs 1``), and :func:`guard` tells the main process
  when the cell must be over: its limit plus :data:`GRACE_S`, or :data:`GRACE_S` after its
  memory passed the limit. A cell still running then (code that swallows the exception,
  sets ``SIGALRM`` to ``SIG_IGN``, blocks it, or sits in native code that never returns to
  Python) is killed with its worker from the main process, fails with the same kind of line,
  and the worker is replaced.

Under ``--executor ray`` only the inside guard acts: a task that ignores the alarm runs on.
A single allocation larger than the machine fails (or is killed by the system) before either
guard sees it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import threading
import time
from collections.abc import Iterator, MutableSequence
from pathlib import Path

from robustbnn.errors import UserError

__all__ = ["GRACE_S", "MEMORY", "TIME", "CellLimitExceeded", "CellLimits", "guard",
           "killed_message", "resident_mb", "share_deadline"]

POLL_S = 0.05  # how often the memory guard reads the resident memory
REFIRE_S = 1.0  # after the first alarm, how often it fires again until the cell ends
GRACE_S = 2.0  # past its limit, how long a cell has to stop at the alarm before it is killed
TIME, MEMORY = 1.0, 2.0  # which limit a deadline is for
# In a worker of a watched pool: [when the main process kills this worker, which limit], both
# 0 while no cell runs (robustbnn.run.watched; a shared array of two doubles).
_DEADLINE: list[MutableSequence[float]] = []


def share_deadline(deadline: MutableSequence[float]) -> None:
    """In a worker of a watched pool: where :func:`guard` writes when this process must be
    killed (``time.monotonic()`` seconds, system-wide on Linux and macOS) and for which limit."""
    _DEADLINE[:] = [deadline]


def _tell(kill_at: float, why: float) -> None:
    """Tell the main process when to kill this worker (0: never), if it watches."""
    for deadline in _DEADLINE:
        deadline[1] = why
        deadline[0] = kill_at


def killed_message(limits: CellLimits, why: float, what: str = "the cell") -> str:
    """The line of a cell the main process killed past a limit (``why``: :data:`TIME` or
    :data:`MEMORY`)."""
    if why == MEMORY:
        passed = (f"grew its process's memory past its limit of {limits.memory_mb} MiB "
                  "(--cell-memory-mb) and did not stop (it caught or ignored the signal)")
    else:
        passed = (f"ran past its time limit of {limits.timeout_s:g} s (--cell-timeout) and did "
                  "not stop (it caught or ignored the alarm)")
    return (f"{what} {passed}, so its worker process was killed {GRACE_S:g} s later; raise the "
            "limit or make the cell smaller")


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
                for deadline in _DEADLINE:  # the main process kills it unless it stops
                    if not 0 < deadline[0] <= time.monotonic() + GRACE_S:
                        _tell(time.monotonic() + GRACE_S, MEMORY)
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
            _tell(time.monotonic() + limits.timeout_s + GRACE_S, TIME)
        start = resident_mb()
        if limits.memory_mb is not None and start is not None:
            watcher = threading.Thread(target=state.watch_memory,
                                       args=(start, threading.main_thread().ident),
                                       name="robustbnn-cell-memory", daemon=True)
            watcher.start()
        yield
        if state.reason is not None:  # the body swallowed the alarm's exception, then returned
            raise CellLimitExceeded(state.reason)
    finally:
        state.active = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        state.stop.set()
        if watcher is not None:
            watcher.join()
        _tell(0.0, 0.0)  # after the memory thread, which may have set a deadline
        signal.signal(signal.SIGALRM, previous)

