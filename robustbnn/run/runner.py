"""The scheduler: run a plan's cells on an executor, reusing finished ones, retrying failures.

A cell is submitted once every cell it depends on (``deps``) or waits for (``after``: its
model's contract cell) is done. A failing cell is retried (``retries`` times) when a retry can
succeed (a dead worker, a lost node, a transient OS error: :mod:`~robustbnn.run.retry`), then
reported with its error; the cells that depend on or
wait for it are skipped and every other cell still runs and is kept. Each cell runs under its
file lock and is written to the store by the process that ran it, as soon as it finishes.
"""

from __future__ import annotations

import concurrent.futures as cf
import concurrent.futures.process  # noqa: F401 - cf.process, also when no pool ran
import dataclasses
import logging
import pickle
import time
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from robustbnn.errors import ContractRefusal
from robustbnn.results.examples import take as take_examples
from robustbnn.run.cell_file import CellMissing
from robustbnn.run.cells import Cell, CellKind
from robustbnn.run.context import Context, RunSpec, bench_data
from robustbnn.run.executors import setup_worker
from robustbnn.run.limits import CellLimitExceeded, CellLimits, guard
from robustbnn.run.plan import Plan
from robustbnn.run.retry import retryable
from robustbnn.run.store import CellStore
from robustbnn.run.tasks import TASKS
from robustbnn.run.tasks.train import trained_model

__all__ = ["Job", "RunReport", "execute_cell", "failure_message", "run_plan"]

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Job:
    """One cell to run, with what a worker needs: the run spec, its dependencies, the store,
    the per-cell limits."""

    spec: RunSpec
    cell: Cell
    deps: tuple[Cell, ...]
    out_dir: str
    limits: CellLimits | None = None


@dataclasses.dataclass
class RunReport:
    """What the scheduler did: cell ids reused, run, failed (with the error) and skipped, and
    the models the model contract refused (``{model: {"clauses", "reason", "message"}}``: the
    broken clauses, what they saw, the whole one-line refusal; from the
    :class:`~robustbnn.errors.ContractRefusal` their contract cell raised)."""

    reused: list[str] = dataclasses.field(default_factory=list)
    ran: list[str] = dataclasses.field(default_factory=list)
    failed: dict[str, str] = dataclasses.field(default_factory=dict)
    skipped: dict[str, str] = dataclasses.field(default_factory=dict)
    refused: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)


def _context(job: Job, store: CellStore) -> Context:
    cell, spec = job.cell, job.spec
    if cell.task == CellKind.CONTRACT:  # no trained model: it builds and fits its own
        return Context(cell, spec, bench_data(spec))
    train = (cell if cell.task == CellKind.TRAIN
             else next(d for d in job.deps if d.task == CellKind.TRAIN))
    heldout = train.params["heldout"]
    data = bench_data(spec, heldout)
    if cell.task == CellKind.TRAIN:
        return Context(cell, spec, data)
    inputs = {d.task: store.arrays(d.id) for d in job.deps if d.task != CellKind.TRAIN}
    return Context(cell, spec, data, trained_model(spec, cell.model, heldout), inputs)


def execute_cell(job: Job) -> dict[str, Any]:
    """Run one cell under its lock and store it; a cell another run finished is reused.

    Returns:
        ``{"reused": bool, "seconds": float}``.
    """
    try:
        setup_worker(job.spec.threads, job.spec.plugins, job.spec.plugin_paths)
        store = CellStore(Path(job.out_dir))
        with store.lock(job.cell.id):
            if store.is_done(job.cell.id):
                return {"reused": True, "seconds": 0.0}
            start = time.perf_counter()
            with guard(job.limits):
                outcome = TASKS.get(job.cell.task)(_context(job, store))
            outcome.rows, examples = take_examples(outcome.rows)
            outcome.arrays = {**outcome.arrays, **examples}
            outcome.seconds = time.perf_counter() - start
            store.write(job.cell, outcome)
    except Exception as err:
        sendable = _sendable(err)
        if sendable is err:
            raise
        raise sendable from err
    return {"reused": False, "seconds": outcome.seconds}


def failure_message(cell: Cell, err: BaseException) -> str:
    """Why ``cell`` failed, naming its model; a worker that died is said so, not a bare
    ``BrokenProcessPool``."""
    model = "" if cell.model in cell.label.split() else f"model {cell.model}: "
    if isinstance(err, CellLimitExceeded):  # its message is the whole story
        return f"{model}{err}"
    if isinstance(err, cf.process.BrokenProcessPool):
        return (f"a worker process died while this cell of model {cell.model} ran or waited "
                f"(BrokenProcessPool: {err}); the system may have killed it (out of memory?) or "
                "native code crashed; rerun with --jobs 1 to see the error in this process")
    return f"{model}{type(err).__name__}: {err}"


def _sendable(err: Exception) -> Exception:
    """``err`` if it survives pickling, else a ``RuntimeError`` with its type and message: an
    exception a worker cannot send back would kill its whole pool."""
    try:
        pickle.loads(pickle.dumps(err))
    except Exception:  # noqa: BLE001 - whatever a plug-in's exception does when pickled
        return RuntimeError(f"{type(err).__name__}: {err}")
    return err


def _gpus(spec: RunSpec, cell: Cell) -> float:
    """Ray resources: a training cell takes a GPU; evaluation cells share one four ways."""
    if spec.device != "cuda":
        return 0
    return 1 if cell.task == CellKind.TRAIN else 0.25


def run_plan(plan: Plan, executor: Any, store: CellStore, *, retries: int = 1,
             progress: bool = False, limits: CellLimits | None = None) -> RunReport:
    """Run every unfinished cell of ``plan``; return what was reused, run, failed, skipped.

    A failure is retried (``retries`` times) only when a retry can succeed
    (:func:`~robustbnn.run.retry.retryable`). Each cell runs under ``limits``
    (:mod:`~robustbnn.run.limits`). When the run is interrupted (Ctrl-C, SIGTERM), the
    executor's workers are killed at once (``abort``) and the interruption goes on up: the
    finished cells are stored already.

    A finished cell whose files vanish or are damaged during the run (a dependency a cell
    could not read, or a cell found missing once every cell has finished) is recomputed once,
    with one warning naming the file; if it vanishes again it is reported as failed. So every
    cell the report lists as reused or run was, at the end, intact in the store.
    """
    scheduler = _Scheduler(plan, executor, store, retries=retries, progress=progress,
                           limits=limits)
    try:
        while True:  # ends when nothing runs and nothing more can start
            scheduler.submit_ready()
            if not scheduler.running:
                if scheduler.pending or not scheduler.recheck_finished():
                    break  # nothing can start (as when nothing is left): the report says so
                continue
            finished, _ = cf.wait(list(scheduler.running), return_when=cf.FIRST_COMPLETED)
            for future in finished:
                scheduler.collect(future)
    except BaseException:  # KeyboardInterrupt (SIGINT, SIGTERM): no worker outlives the run
        abort = getattr(executor, "abort", None)
        if abort is not None:
            abort()
        raise
    finally:
        scheduler.bar.close()
    return scheduler.report


class _Scheduler:
    """The state of one :func:`run_plan`: what is done, pending, running, and each step."""

    def __init__(self, plan: Plan, executor: Any, store: CellStore, *, retries: int,
                 progress: bool, limits: CellLimits | None = None) -> None:
        self.plan, self.executor, self.store = plan, executor, store
        self.limits = limits
        self.retries, self.progress = retries, progress
        self.report = RunReport()
        self.done = store.done_ids([c.id for c in plan.cells], warn=True)
        self.report.reused = [c.id for c in plan.cells if c.id in self.done]
        self.cells = plan.by_id()
        self.pending = [c for c in plan.cells if c.id not in self.done]
        self.running: dict[cf.Future, Cell] = {}
        self.attempts: dict[str, int] = {}
        self.recomputed: set[str] = set()  # finished cells whose files vanished, queued once more
        self.bar = tqdm(total=len(plan.cells), initial=len(self.report.reused), desc="cells",
                        unit="cell", disable=not progress)
        if self.report.reused:
            log.info("reusing %d finished cells of %s", len(self.report.reused), store.dir)

    def requeue(self, cell_id: str, why: str) -> bool:
        """Put a vanished finished cell back in the queue (once); False when it was already."""
        if cell_id in self.recomputed:
            return False
        self.recomputed.add(cell_id)
        log.warning("%s; recomputing that cell (%s)", why, self.cells[cell_id].label)
        self.done.discard(cell_id)
        self._unfinish(cell_id)
        self.pending.insert(0, self.cells[cell_id])
        self.bar.update(-1)
        return True

    def _unfinish(self, cell_id: str) -> None:
        for finished in (self.report.reused, self.report.ran):
            if cell_id in finished:
                finished.remove(cell_id)

    def submit_ready(self) -> None:
        """Skip the pending cells whose gates failed; submit those whose gates are done."""
        report = self.report
        for cell in list(self.pending):
            gates = (*cell.deps, *cell.after)  # after: scheduling only (the model contract)
            blocked = [d for d in gates if d in report.failed or d in report.skipped]
            if blocked:
                report.skipped[cell.id] = f"depends on {blocked[0][:12]}, which did not finish"
                self.pending.remove(cell)
                self.bar.update()
            elif all(d in self.done for d in gates) and len(self.running) < self.executor.capacity:
                self.bar.set_postfix_str(cell.label)
                job = Job(self.plan.spec, cell, tuple(self.cells[d] for d in cell.deps),
                          str(self.store.out_dir), self.limits)
                gpus = _gpus(self.plan.spec, cell)
                self.running[self.executor.submit(execute_cell, job, gpus=gpus)] = cell
                self.pending.remove(cell)

    def recheck_finished(self) -> bool:
        """Once nothing runs: requeue the finished cells deleted or damaged since (once; a
        second time fails them). True when one was requeued."""
        requeued = False
        for cell_id in (*self.report.reused, *self.report.ran):
            problem = self.store.problem(cell_id)
            if problem is None:
                continue
            if self.requeue(cell_id, problem):
                requeued = True
                continue
            self._unfinish(cell_id)
            self.report.failed[cell_id] = (f"{problem}, a second time after it was recomputed "
                                           "during this run; rerun the same command to "
                                           "recompute it")
        return requeued

    def collect(self, future: cf.Future) -> None:
        """Record a finished future: done, retried, or failed (with the contract's refusal)."""
        cell = self.running.pop(future)
        try:
            outcome = future.result()
        except Exception as err:  # noqa: BLE001 - any cell failure is reported, not fatal
            self._failed(cell, err)
            return
        report = self.report
        self.done.add(cell.id)
        (report.reused if outcome["reused"] else report.ran).append(cell.id)
        self.bar.update()
        if not self.progress:  # no bar (a log file, a pipe): one line per finished cell
            finished_cells = (len(report.reused) + len(report.ran) + len(report.failed)
                              + len(report.skipped))
            log.info("[%d/%d] %s: %.1f s", finished_cells, len(self.plan.cells), cell.label,
                     outcome["seconds"])

    def _failed(self, cell: Cell, err: Exception) -> None:
        """A cell raised: recompute a vanished input first, retry, or report it."""
        lost = getattr(err, "cell_id", None) if isinstance(err, CellMissing) else None
        if lost in self.cells and lost != cell.id and (lost not in self.done
                                                       or self.requeue(lost, str(err))):
            self.pending.append(cell)  # its input is recomputed first; not an attempt
            return
        self.attempts[cell.id] = self.attempts.get(cell.id, 0) + 1
        message = failure_message(cell, err)
        # Only a failure of what the cell ran on (a dead worker, a lost node, a transient OS
        # error) can pass; the cell's own errors come back (robustbnn.run.retry).
        if self.attempts[cell.id] <= self.retries and retryable(err):
            log.warning("cell %s (%s) failed (%s); retrying", cell.id[:12], cell.label, message)
            self.pending.insert(0, cell)
            return
        self.report.failed[cell.id] = message
        if isinstance(err, ContractRefusal):
            self.report.refused[err.model] = {"clauses": err.clauses,
                                              "reason": err.seen or str(err),
                                              "message": str(err)}
        self.bar.update()
