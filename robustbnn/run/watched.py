"""The local pool under per-cell limits: worker processes watched from the main process.

With ``--cell-timeout`` or ``--cell-memory-mb``, the local executor is a :class:`WatchedPool`
of ``--jobs`` worker processes (one with ``--jobs 1``), each its own one-process pool running
one cell at a time, so a worker can be killed without touching the others' cells. In the
worker, :func:`robustbnn.run.limits.guard` writes when its cell must be over into an array
this process shares with it; a thread here kills a worker still running its cell then (a cell
that swallowed the alarm's exception, ignored or blocked ``SIGALRM``, or is stuck in native
code), fails that cell with :func:`robustbnn.run.limits.killed_message`, and the next cell
gets a fresh worker. Without limits the plain :class:`~robustbnn.run.executors.PoolExecutor`
(or the in-process executor for ``--jobs 1``) runs the cells.
"""

from __future__ import annotations

import concurrent.futures as cf
import concurrent.futures.process  # noqa: F401 - cf.process.BrokenProcessPool
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from robustbnn.run.limits import CellLimitExceeded, CellLimits, killed_message, share_deadline
from robustbnn.run.workers import init_worker, kill_pool

__all__ = ["WatchedPool", "init_watched_worker"]

log = logging.getLogger(__name__)

WATCH_S = 0.1  # how often the main process looks at every running cell's deadline


def init_watched_worker(parent: int, death_signal: bool, deadline: Any) -> None:
    """A watched worker's ``initializer``: :func:`~robustbnn.run.workers.init_worker`, and
    the shared array its cells' deadlines go to."""
    init_worker(parent, death_signal)
    share_deadline(deadline)


class _Slot:
    """One worker process (a one-process pool), its shared deadline and its current cell."""

    def __init__(self, context: Any) -> None:
        self.context = context
        self.deadline = context.RawArray("d", 2)  # [kill at, which limit]; 0 while idle
        self.future: cf.Future | None = None  # the cell's future, as the scheduler holds it
        self.pool = self._new()
        self.killed = False
        self.killing: cf.Future | None = None  # the cell whose worker the watch is killing

    def _new(self) -> cf.ProcessPoolExecutor:
        # The worker starts from the thread that submits (the scheduler's, the main thread):
        # the parent-death signal is safe only then (robustbnn.run.workers.watch_parent).
        main = threading.current_thread() is threading.main_thread()
        return cf.ProcessPoolExecutor(max_workers=1, mp_context=self.context,
                                      initializer=init_watched_worker,
                                      initargs=(os.getpid(), main, self.deadline))

    def idle(self) -> bool:
        """Whether no cell runs here (the scheduler collected or has yet to collect its end)."""
        return self.future is None or self.future.done()

    def renew(self) -> None:
        """A fresh worker in place of a killed or dead one (the old pool's thread joined: one
        left running races the interpreter's exit, which then writes to its closed pipe)."""
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.pool = self._new()
        self.killed = False

    def processes(self) -> list[multiprocessing.Process]:
        """The worker process (none before the first cell starts it)."""
        return list((getattr(self.pool, "_processes", None) or {}).values())


def _settle(slot: _Slot, future: cf.Future, done: cf.Future) -> None:
    """Complete ``future`` as ``done`` completed, unless the watch is killing its worker (the
    watch fails it then, once the worker is gone)."""
    if slot.killing is future:
        return
    try:
        if (err := done.exception()) is not None:
            future.set_exception(err)
        else:
            future.set_result(done.result())
    except (cf.InvalidStateError, cf.CancelledError):
        pass


class WatchedPool:
    """``jobs`` worker processes whose cells are killed past their limits (see the module).

    Args:
        jobs: Number of worker processes.
        limits: The run's per-cell limits.
    """

    def __init__(self, jobs: int, limits: CellLimits) -> None:
        self.capacity = jobs
        self.limits = limits
        context = multiprocessing.get_context("spawn")
        self._slots = [_Slot(context) for _ in range(jobs)]
        self._guard = threading.Lock()
        self._closed = threading.Event()
        self._watch = threading.Thread(target=self._watch_cells, name="robustbnn-cell-watch",
                                       daemon=True)
        self._watch.start()

    def submit(self, fn: Callable[[Any], Any], job: Any, *, gpus: float = 0) -> cf.Future:
        """Run ``fn(job)`` on an idle worker (a fresh one after a kill or a crash)."""
        with self._guard:
            slot = next(s for s in self._slots if s.idle())
            if slot.killed:
                slot.renew()
            slot.deadline[0] = slot.deadline[1] = 0.0
            future: cf.Future = cf.Future()
            slot.future = future
        try:
            inner = slot.pool.submit(fn, job)
        except cf.process.BrokenProcessPool:
            log.warning("a worker process died; starting a new one")
            slot.renew()
            inner = slot.pool.submit(fn, job)
        inner.add_done_callback(lambda done: _settle(slot, future, done))
        return future

    def _watch_cells(self) -> None:
        """Kill every worker whose cell is past its deadline; fail that cell in one line."""
        while not self._closed.wait(WATCH_S):
            for slot in self._slots:
                with self._guard:
                    future, (kill_at, why) = slot.future, tuple(slot.deadline)
                    if (future is None or future.done() or not kill_at
                            or time.monotonic() < kill_at):
                        continue
                    slot.killing = future  # the dying worker's own error is not the cell's
                    workers = slot.processes()
                for process in workers:
                    process.kill()
                for process in workers:
                    process.join(timeout=5)
                with self._guard:  # the worker is gone: the cell fails, the slot is free
                    slot.killed = True
                    slot.killing = None
                try:
                    future.set_exception(CellLimitExceeded(killed_message(self.limits, why)))
                except cf.InvalidStateError:  # cancelled meanwhile (an interrupted run)
                    pass

    def close(self) -> None:
        """Stop the watch and the workers (after :meth:`abort`, at once)."""
        self._closed.set()
        self._watch.join()
        for slot in self._slots:
            slot.pool.shutdown(wait=True, cancel_futures=True)

    def abort(self) -> None:
        """Kill every worker now, cells half done (an interrupted run)."""
        self._closed.set()
        for slot in self._slots:
            kill_pool(slot.pool)
