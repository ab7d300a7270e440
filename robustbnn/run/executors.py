"""Executors: where cells run. Each only submits a job and hands back a future of its result.

* ``LocalExecutor``: in this process, one cell at a time (the default).
* ``PoolExecutor``: ``--jobs N`` worker processes (spawned), each with its own torch thread
  budget so the pool does not oversubscribe the cores.
* ``RayExecutor``: ``--executor ray``: each cell is a Ray task; Ray is imported only here.
* ``WatchedPool`` (:mod:`robustbnn.run.watched`): the local executor under ``--cell-timeout``
  or ``--cell-memory-mb``: ``--jobs`` workers (one for ``--jobs 1``), a cell past its limit
  killed with its worker from this process.

Executors know nothing of models or attacks (STYLE.md §10): the scheduler in
:mod:`robustbnn.run.runner` decides what is ready, retries failures and owns the store.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import multiprocessing
import os
import threading
from collections.abc import Callable
from typing import Any

from robustbnn.errors import ConfigError, UserError
from robustbnn.plugins import load_plugins
from robustbnn.run.limits import CellLimits
from robustbnn.run.workers import init_worker, kill_pool, watch_parent

__all__ = ["ClusterLost", "LocalExecutor", "PoolExecutor", "RayExecutor", "TaskLost",
           "init_worker", "make_executor", "setup_worker", "watch_parent"]

log = logging.getLogger(__name__)

_READY: set[tuple] = set()


def setup_worker(threads: int | None, plugins: tuple[str, ...],
                 paths: tuple[str, ...] = ()) -> None:
    """Once per process: the torch thread budget and the plug-ins the command loaded.

    Plug-ins are the entry points of every group of :data:`robustbnn.plugins.GROUPS` and the
    ``--plugin`` modules, found with ``paths`` on ``sys.path`` (idempotent).

    Raises:
        PluginError: For a plug-in that does not import in this worker.
    """
    key = (threads, plugins, paths)
    if key in _READY:
        return
    import torch

    if threads:
        torch.set_num_threads(threads)
    load_plugins(plugins, paths)
    _READY.add(key)


class LocalExecutor:
    """Runs each job in this process when it is submitted."""

    capacity = 1

    def submit(self, fn: Callable[[Any], Any], job: Any, *, gpus: float = 0) -> cf.Future:
        """Run ``fn(job)`` now; a future holding its result or its exception."""
        future: cf.Future = cf.Future()
        try:
            future.set_result(fn(job))
        except Exception as err:  # the scheduler retries or reports it
            future.set_exception(err)
        return future

    def close(self) -> None:
        """Nothing to release."""

    def abort(self) -> None:
        """Nothing runs in the background."""


class PoolExecutor:
    """A pool of ``jobs`` spawned worker processes (each job sets up its worker's threads and
    plug-ins itself, through :func:`setup_worker`).

    Args:
        jobs: Number of worker processes.
    """

    def __init__(self, jobs: int) -> None:
        self.capacity = jobs
        self._pool = self._new()

    def _new(self) -> cf.ProcessPoolExecutor:
        # Workers start from the thread that submits (the scheduler, which creates the pool):
        # the parent-death signal is safe only when that is the main thread, which lives as
        # long as the process (watch_parent).
        main = threading.current_thread() is threading.main_thread()
        return cf.ProcessPoolExecutor(max_workers=self.capacity,
                                      mp_context=multiprocessing.get_context("spawn"),
                                      initializer=init_worker, initargs=(os.getpid(), main))

    def submit(self, fn: Callable[[Any], Any], job: Any, *, gpus: float = 0) -> cf.Future:
        """Queue ``fn(job)`` on a worker; a crashed pool is replaced first."""
        try:
            return self._pool.submit(fn, job)
        except cf.process.BrokenProcessPool:
            log.warning("a worker process died; starting a new pool")
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new()
            return self._pool.submit(fn, job)

    def close(self) -> None:
        """Stop the workers (after :meth:`abort`, at once)."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def abort(self) -> None:
        """Kill the workers now, cells half done (an interrupted run: what finished is stored,
        and a killed cell's lock and temporary files are released or removed by the next run).
        """
        kill_pool(self._pool)


class ClusterLost(UserError):
    """The Ray cluster a run joined went away (its head died or was restarted)."""


class TaskLost(RuntimeError):
    """A cell's task whose cluster went away (not a ``UserError``: the scheduler retries it,
    and the retry's :meth:`RayExecutor.submit` ends the run with :class:`ClusterLost`)."""


def _settle(future: cf.Future, *, result: Any = None,
            error: BaseException | None = None) -> None:
    """Complete ``future`` unless it already is (a lost cluster and its task race)."""
    try:
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)
    except cf.InvalidStateError:
        pass


class RayExecutor:
    """Each job is a Ray task on a running cluster (``address``), else on a local Ray.

    A local Ray is this run's own: :meth:`close` stops it, and if this process dies first a
    :class:`~robustbnn.run.ray_cluster.Reaper` stops it (its agents would otherwise outlive
    the driver by a minute). A cluster the run joined is left running; :meth:`close` only
    disconnects. A task whose node dies is resubmitted by Ray (``max_retries``; the cell's
    lock and its stored file make sure no finished cell runs twice); an exception a cell
    raises is not retried by Ray but by the scheduler (``--retries``). If the joined
    cluster's head dies or restarts (Ray does not survive that without an external GCS
    store), a :class:`~robustbnn.run.ray_cluster.ClusterWatch` notices and the run ends with
    :class:`ClusterLost`, one line saying to rerun to resume.

    Args:
        address: ``--ray-address``; None uses ``$RAY_ADDRESS``, else starts a local Ray (or
            uses one this process already started).
        threads: CPUs per task (the job sets the same torch thread budget).
    """

    capacity = 1 << 30  # Ray queues what it cannot place yet
    node_retries = 3  # Ray's default for system failures (a dead worker or node)
    watch_interval = 2.0  # seconds between two questions to a joined cluster's GCS

    def __init__(self, address: str | None, threads: int | None) -> None:
        try:
            import ray
        except ImportError:
            raise ConfigError("--executor ray needs Ray: pip install 'robustbnn[ray]'") from None
        from robustbnn.run.ray_cluster import ClusterWatch, Reaper, children

        self._ray = ray
        self._address = address or os.environ.get("RAY_ADDRESS") or None
        self._started = not ray.is_initialized()
        self._reaper: Reaper | None = None
        self._watch: ClusterWatch | None = None
        self._lost: ClusterLost | None = None
        self._running: set[cf.Future] = set()
        self._guard = threading.Lock()
        if self._started:
            before = children(os.getpid())
            # "local": a Ray of our own, never one that `ray start` left on this machine
            ray.init(address=self._address or "local", include_dashboard=False,
                     log_to_driver=True)
            if self._address is None:
                self._reaper = Reaper(children(os.getpid()) - before)
        if self._started and self._address is not None:
            gcs = ray._private.worker.global_worker.gcs_client  # noqa: SLF001 - no public ping
            self._watch = ClusterWatch(
                lambda: gcs.internal_kv_get(b"session_name", b"session", timeout=2),
                self._on_lost, interval=self.watch_interval)
        self._threads = threads or 1
        self._remote = None

    def _on_lost(self, why: str) -> None:
        """Fail every waiting task and every later submission: the cluster is gone."""
        from robustbnn.run.ray_cluster import LOST_CLUSTER

        with self._guard:
            self._lost = ClusterLost(LOST_CLUSTER.format(address=self._address, why=why))
            running, self._running = self._running, set()
        for future in running:
            _settle(future, error=TaskLost(f"the Ray cluster at {self._address} was lost"))

    def submit(self, fn: Callable[[Any], Any], job: Any, *, gpus: float = 0) -> cf.Future:
        """Submit ``fn(job)`` as a Ray task asking for ``threads`` CPUs and ``gpus`` GPUs.

        Raises:
            ClusterLost: Once the joined cluster is gone.
        """
        if self._lost is not None:
            raise self._lost
        if self._remote is None:
            self._remote = self._ray.remote(fn)
        ref = self._remote.options(num_cpus=self._threads, num_gpus=gpus,
                                   max_retries=self.node_retries,
                                   retry_exceptions=False).remote(job)
        future: cf.Future = cf.Future()  # ours, so that a lost cluster can fail it
        with self._guard:
            self._running.add(future)

        def relay(done: cf.Future) -> None:
            with self._guard:
                self._running.discard(future)
            if (err := done.exception()) is not None:
                _settle(future, error=err)
            else:
                _settle(future, result=done.result())

        ref.future().add_done_callback(relay)
        return future

    def close(self) -> None:
        """Stop the local Ray this run started, or leave the cluster it joined (a Ray started
        by the caller stays)."""
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        if self._started:
            self._ray.shutdown()
        if self._reaper is not None:  # whatever shutdown left behind
            self._reaper.close()
            self._reaper = None


def make_executor(kind: str, *, jobs: int, threads: int | None, ray_address: str | None = None,
                  limits: CellLimits | None = None) -> Any:
    """``local`` (``jobs`` 1), a process pool (``jobs`` > 1), or ``ray``; under per-cell
    ``limits``, the local executor is a :class:`~robustbnn.run.watched.WatchedPool` of
    ``jobs`` workers (one for ``jobs`` 1), which kills a cell that does not stop at its limit.
    """
    if kind == "ray":
        return RayExecutor(ray_address, threads)
    if kind != "local":
        raise ConfigError(f"unknown executor {kind!r}; known: ['local', 'ray']")
    if limits is not None and (limits.timeout_s is not None or limits.memory_mb is not None):
        from robustbnn.run.watched import WatchedPool

        return WatchedPool(jobs, limits)
    if jobs > 1:
        return PoolExecutor(jobs)
    return LocalExecutor()
