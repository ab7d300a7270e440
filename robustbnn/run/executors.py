"""Executors: where cells run. Each only submits a job and hands back a future of its result.

* ``LocalExecutor``: in this process, one cell at a time (the default).
* ``PoolExecutor``: ``--jobs N`` worker processes (spawned), each with its own torch thread
  budget so the pool does not oversubscribe the cores.
* ``RayExecutor``: ``--executor ray``: each cell is a Ray task; Ray is imported only here.

Executors know nothing of models or attacks (STYLE.md §10): the scheduler in
:mod:`robustbnn.run.runner` decides what is ready, retries failures and owns the store.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import multiprocessing
import os
from collections.abc import Callable
from typing import Any

from robustbnn.errors import ConfigError
from robustbnn.plugins import load_plugins

__all__ = ["LocalExecutor", "PoolExecutor", "RayExecutor", "make_executor", "setup_worker"]

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
        return cf.ProcessPoolExecutor(max_workers=self.capacity,
                                      mp_context=multiprocessing.get_context("spawn"))

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
        """Stop the workers."""
        self._pool.shutdown(wait=True, cancel_futures=True)


class RayExecutor:
    """Each job is a Ray task on a running cluster (``address``), else on a local Ray.

    Args:
        address: ``--ray-address``; None uses ``$RAY_ADDRESS``, else starts a local Ray (or
            uses one this process already started).
        threads: CPUs per task (the job sets the same torch thread budget).
    """

    capacity = 1 << 30  # Ray queues what it cannot place yet

    def __init__(self, address: str | None, threads: int | None) -> None:
        try:
            import ray
        except ImportError:
            raise ConfigError("--executor ray needs Ray: pip install 'robustbnn[ray]'") from None
        self._ray = ray
        self._started = not ray.is_initialized()
        if self._started:
            ray.init(address=address or os.environ.get("RAY_ADDRESS") or None,
                     include_dashboard=False, log_to_driver=True)
        self._threads = threads or 1
        self._remote = None

    def submit(self, fn: Callable[[Any], Any], job: Any, *, gpus: float = 0) -> cf.Future:
        """Submit ``fn(job)`` as a Ray task asking for ``threads`` CPUs and ``gpus`` GPUs."""
        if self._remote is None:
            self._remote = self._ray.remote(fn)
        ref = self._remote.options(num_cpus=self._threads, num_gpus=gpus,
                                   max_retries=0).remote(job)
        return ref.future()

    def close(self) -> None:
        """Leave the cluster if this run joined it (a Ray started by the caller stays)."""
        if self._started:
            self._ray.shutdown()


def make_executor(kind: str, *, jobs: int, threads: int | None,
                  ray_address: str | None = None) -> LocalExecutor | PoolExecutor | RayExecutor:
    """``local`` (``jobs`` 1), a process pool (``jobs`` > 1), or ``ray``."""
    if kind == "ray":
        return RayExecutor(ray_address, threads)
    if kind != "local":
        raise ConfigError(f"unknown executor {kind!r}; known: ['local', 'ray']")
    if jobs > 1:
        return PoolExecutor(jobs)
    return LocalExecutor()
