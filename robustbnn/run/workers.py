"""The lifetime of a local worker process: it ends with the main process, whatever ended it.

Shared by the pool executors (:class:`robustbnn.run.executors.PoolExecutor` and
:class:`robustbnn.run.watched.WatchedPool`), whose ``initializer`` is :func:`init_worker`.
"""

from __future__ import annotations

import concurrent.futures as cf
import ctypes
import os
import signal
import sys
import threading
import time

__all__ = ["PARENT_POLL_S", "init_worker", "kill_pool", "watch_parent"]

PARENT_POLL_S = 0.5  # how often a pool worker's watchdog checks that the main process lives
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _parent_death_signal() -> bool:
    """Ask Linux to SIGKILL this process when its parent dies; False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):  # no libc or no prctl (musl builds without it)
        return False


def watch_parent(parent: int, death_signal: bool = True) -> None:
    """End this worker process within a second of ``parent`` (the main process), whatever
    ended the parent (SIGKILL, SIGTERM, SIGINT).

    A pool worker blocks reading its call queue, and it holds both ends of that pipe (and the
    multiprocessing resource tracker's), so after a SIGKILL of the main process it would never
    see end of file and would idle forever, with its model in memory. Two guards (set up by
    :func:`init_worker`, the pool's ``initializer``):

    * on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills the worker when its
      parent dies, even while the worker runs native code that holds the GIL (a daemon
      thread cannot run then). The signal follows the parent *thread* that started the worker,
      so the pool asks for it (``death_signal``) only when the main thread creates it;
    * everywhere, a daemon thread polls ``os.getppid()`` every :data:`PARENT_POLL_S` s: an
      orphan is re-parented, so its parent id changes.
    """

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(1)  # no cleanup: the run that wanted this worker's result is gone

    if death_signal:
        _parent_death_signal()
    if os.getppid() != parent:  # the main process died while this worker started
        os._exit(1)
    threading.Thread(target=watch, name="robustbnn-parent-watch", daemon=True).start()


def init_worker(parent: int, death_signal: bool) -> None:
    """A pool worker's ``initializer``: :func:`watch_parent`, and progress bars that take a
    thread lock, not tqdm's default multiprocessing lock: a worker killed mid-cell (an
    interrupted run) never releases that named semaphore, and the resource tracker would print
    a warning about it after the run's one line."""
    watch_parent(parent, death_signal)
    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())


def kill_pool(pool: cf.ProcessPoolExecutor) -> None:
    """Kill ``pool``'s worker processes now, the cells they run half done, and wait for them."""
    workers = list((getattr(pool, "_processes", None) or {}).values())
    # The jobs queued for the killed workers may fill the call queue's pipe, whose feeder
    # thread then blocks for ever, and the pool's exit joins it (a hang at exit seen under
    # load): what is queued is dropped, as the cells are.
    call_queue = getattr(pool, "_call_queue", None)
    if call_queue is not None:
        call_queue.cancel_join_thread()
    pool.shutdown(wait=False, cancel_futures=True)
    for process in workers:
        if process.is_alive():
            process.kill()
    for process in workers:
        process.join(timeout=5)
