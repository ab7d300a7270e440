"""``robustbnn bench``: a suite's config -> a plan of cells -> an executor -> results and reports.

The run goes down the floors once: :func:`run_bench` builds the plan
(:mod:`robustbnn.run.plan`), claims the run folder, runs the unfinished cells on the chosen
executor (:mod:`robustbnn.run.runner`), then assembles ``results.csv``/``.jsonl``, the
per-example scores, ``run.json`` and every report from the stored cells alone.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

import torch

from robustbnn import __version__
from robustbnn.contract.streams import make_generator
from robustbnn.data import DATASETS
from robustbnn.data.heldout import heldout_name
from robustbnn.data.ood_sets import check_preprocessing
from robustbnn.errors import ConfigError
from robustbnn.models import MODELS
from robustbnn.plugins import plugin_paths
from robustbnn.report.render import render
from robustbnn.results.schema import Result
from robustbnn.results.scores import scores_path, write_scores
from robustbnn.results.store import remove_stale_temps, write_json, write_results
from robustbnn.run.cells import Cell
from robustbnn.run.context import RunSpec, bench_data, ood_images, prepare_data
from robustbnn.run.executors import make_executor
from robustbnn.run.plan import Plan, build_plan, check_names, format_plan
from robustbnn.run.runner import RunReport, run_plan
from robustbnn.run.store import CellStore
from robustbnn.run.tasks._faults import FAULT_ARRAY
from robustbnn.settings import check_owners, model_config, resolve_settings
from robustbnn.suites import BenchConfig
from robustbnn.training.cache import remove_dead_temps
from robustbnn.training.fit_or_load import fit_or_load

__all__ = ["BenchOptions", "BenchOutcome", "check_bench", "check_overrides", "fit_or_load",
           "make_generator", "model_config", "prepare_data", "resolve_models", "run_bench"]

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class BenchOptions:
    """Where and how a bench runs; none of it changes a number (the device aside).

    Attributes:
        out_dir: The run folder.
        suite: The suite's name, for ``run.json``.
        device: The run device.
        data_root: The data folder (None: ``$ROBUSTBNN_DATA``, else the user cache folder).
        cache_dir: The model cache; None keeps trained models in the run folder only.
        download: Whether loaders may download missing files.
        progress: Progress bars.
        save_scores: Write per-example OOD scores to ``out_dir/scores/``.
        executor: ``local`` or ``ray``; ``local`` with ``jobs`` > 1 is a process pool.
        jobs: Worker processes of the local pool.
        threads: torch threads per cell (None: all cores for one job, cores // jobs for more).
        retries: Retries of a failing cell before it is reported.
        ray_address: The Ray cluster (None: ``$RAY_ADDRESS``, else a local Ray).
        plugins: Plug-in modules every worker imports.
        overwrite: Replace a run of another configuration in ``out_dir``.
        argv: The command line, for ``run.json``.
    """

    out_dir: Path
    suite: str = "default"
    device: torch.device = torch.device("cpu")
    data_root: Path | None = None
    cache_dir: Path | None = None
    download: bool = False
    progress: bool = False
    save_scores: bool = True
    executor: str = "local"
    jobs: int = 1
    threads: int | None = None
    retries: int = 1
    ray_address: str | None = None
    plugins: tuple[str, ...] = ()
    overwrite: bool = False
    argv: tuple[str, ...] | None = None


@dataclasses.dataclass(frozen=True)
class BenchOutcome:
    """A finished bench: its rows (plan order), what the scheduler did, and the models the
    model contract refused (``{model: {"clauses", "reason"}}``)."""

    rows: list[Result]
    report: RunReport
    plan: Plan
    refused: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)


def resolve_models(cfg: BenchConfig) -> BenchConfig:
    """Fill in every registered model when the config names none; check the names."""
    cfg = cfg if cfg.models else dataclasses.replace(cfg, models=tuple(MODELS.names()))
    for name in (*cfg.models, *cfg.heldout_models):
        MODELS.get(name)
    return cfg


def check_overrides(cfg: BenchConfig, user: tuple[str, ...] = ()) -> None:
    """Every ``--set`` owner must be a registered model or attack, and one of the run's for
    user sets; a ``*.field`` must name a field of at least one of the run's models (a typo
    would otherwise change nothing). See :func:`robustbnn.settings.check_owners`."""
    check_owners(cfg, user)


def check_bench(cfg: BenchConfig, user: tuple[str, ...] = ()) -> BenchConfig:
    """Check every value of a run before any work: the config's types and ranges, every name
    (models, dataset, attacks, OOD sets, measures), the ``--set`` overrides and every model
    config they give (types and ranges).

    Args:
        cfg: The run's config (no models = every registered one).
        user: The ``--set`` items given on the command line.

    Returns:
        The config with its models resolved.

    Raises:
        ConfigError: A value of the wrong type or out of range, or a malformed ``--set``.
        UnknownNameError: An unknown model, dataset, attack, OOD set or measure.
    """
    cfg = resolve_models(cfg).check()
    check_overrides(cfg, user)
    check_names(RunSpec(cfg=cfg, data_root=None, download=False, device="cpu", cache_dir=""))
    check_preprocessing(cfg.ood_preprocessing)
    DATASETS.get(cfg.dataset)
    resolve_settings(cfg)  # every model and attack config: types and ranges
    return cfg


def git_sha() -> str | None:
    """The commit of the robustbnn checkout, if it is one."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=5, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


JOBS_ENV = "ROBUSTBNN_JOBS"
MAX_AUTO_JOBS = 8


def auto_jobs(device: torch.device, executor: str = "local") -> int:
    """What ``--jobs auto`` means: ``$ROBUSTBNN_JOBS`` when set, else one worker per usable
    CPU core (at most :data:`MAX_AUTO_JOBS`) for a local run on the CPU, and 1 on a GPU (one
    process keeps the device busy) or with Ray (which schedules cells itself).

    On the CPU two one-thread workers keep two cores busier than one two-thread process on
    these small matrices: the default suite took 0.68 of the time (README, "Wall time").

    Raises:
        ConfigError: If ``$ROBUSTBNN_JOBS`` is not a positive whole number.
    """
    value = os.environ.get(JOBS_ENV, "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise ConfigError(f"${JOBS_ENV} is {value!r}, not a positive whole number; set it "
                              f"to the number of worker processes (1 = in-process) or unset it")
        return int(value)
    if device.type != "cpu" or executor != "local":
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_AUTO_JOBS))


def _threads(opts: BenchOptions) -> int | None:
    """torch threads per cell: ``--threads``; else one per Ray task (Ray runs one task per
    core, as the pool of ``--jobs auto`` runs one one-thread worker per core, so the two give
    the same numbers), ``cores // jobs`` in a pool, and every core for one in-process job."""
    if opts.threads:
        return opts.threads
    if opts.executor == "ray":
        return 1
    if opts.jobs > 1:
        return max(1, (torch.get_num_threads()) // max(1, opts.jobs))
    return None


def make_spec(cfg: BenchConfig, opts: BenchOptions) -> RunSpec:
    """The spec every worker of this run gets."""
    cache_dir = opts.cache_dir or Path(opts.out_dir) / "cells" / "models"
    local = opts.executor == "local" and opts.jobs == 1
    return RunSpec(cfg=cfg, data_root=str(opts.data_root) if opts.data_root else None,
                   download=opts.download, device=opts.device.type, cache_dir=str(cache_dir),
                   plugins=opts.plugins, plugin_paths=plugin_paths(opts.plugins),
                   threads=_threads(opts), progress=opts.progress and local,
                   settings=resolve_settings(cfg))


def plan_bench(cfg: BenchConfig, opts: BenchOptions) -> tuple[Plan, CellStore]:
    """Resolve the config and build its plan (loads the training data, trains nothing)."""
    cfg = check_bench(cfg)
    return build_plan(make_spec(cfg, opts)), CellStore(Path(opts.out_dir))


def print_plan(cfg: BenchConfig, opts: BenchOptions) -> str:
    """``--plan``: the cells, their dependencies and which are done; runs nothing."""
    plan, store = plan_bench(cfg, opts)
    return format_plan(plan, store.done_ids([c.id for c in plan.cells]))


def run_bench(cfg: BenchConfig, opts: BenchOptions) -> BenchOutcome:
    """Run the plan's unfinished cells, then assemble results and reports from the store.

    Raises:
        UserError: For unknown names, missing or corrupt data, a run folder of another
            configuration.
    """
    started = dt.datetime.now(dt.timezone.utc)
    plan, store = plan_bench(cfg, opts)
    Path(opts.out_dir).mkdir(parents=True, exist_ok=True)
    with store.hold():  # from the claim to the last report: a second run waits
        store.claim(plan.identity, overwrite=opts.overwrite)
        if removed := remove_stale_temps(Path(opts.out_dir)):
            log.info("removed %d temporary files of killed runs in %s", removed, opts.out_dir)
        if removed := remove_dead_temps(Path(plan.spec.cache_dir)):
            log.info("removed %d temporary folders of killed writers in the model cache %s",
                     removed, plan.spec.cache_dir)
        for cell in plan.cells:  # every OOD set loads (and is verified) before any training
            if cell.task == "ood":
                ood_images(plan.spec, cell.params["set"])
        executor = make_executor(opts.executor, jobs=opts.jobs, threads=plan.spec.threads,
                                 ray_address=opts.ray_address)
        try:
            report = run_plan(plan, executor, store, retries=opts.retries,
                              progress=opts.progress)
        finally:
            executor.close()
        refused = refusals(plan, report)
        # No cell with results finished (a passed contract has none), or every model was
        # refused: no results, no reports (the CLI says why).
        tasks = {c.id: c.task for c in plan.cells}
        scored = [i for i in (*report.reused, *report.ran) if tasks[i] != "contract"]
        if not scored or set(refused) >= set(_models(plan)):
            return BenchOutcome([], report, plan, refused)
        # A refused model gets no numbers, not even those of cells an earlier run stored.
        stored = [(c, p) for c, p in finished_cells(plan, store, report)
                  if c.model not in refused]
        rows = assemble(stored, store, opts)
        write_run_json(plan, stored, opts, report, started, refused)
        render([Path(opts.out_dir)], Path(opts.out_dir))
    return BenchOutcome(rows, report, plan, refused)


def _models(plan: Plan) -> list[str]:
    """The run's models, in plan order."""
    return list(dict.fromkeys(c.model for c in plan.cells))


def refusals(plan: Plan, report: RunReport) -> dict[str, dict[str, Any]]:
    """The models whose contract cell refused them: ``{model: {"clauses", "reason"}}``, in
    plan order."""
    return {m: report.refused[m] for m in _models(plan) if m in report.refused}


def finished_cells(plan: Plan, store: CellStore,
                   report: RunReport) -> list[tuple[Cell, dict[str, Any]]]:
    """Every cell the run reports finished (reused or run), with its stored, verified JSON,
    in plan order (each file read once). None is skipped: a cell missing now fails the run.

    Raises:
        CellMissing: A finished cell whose file vanished or was damaged since; names it.
    """
    finished = {*report.reused, *report.ran}
    return [(cell, store.read(cell.id)) for cell in plan.cells if cell.id in finished]


def assemble(stored: list[tuple[Cell, dict[str, Any]]], store: CellStore,
             opts: BenchOptions) -> list[Result]:
    """``results.csv``/``.jsonl`` (plan order) and the per-example scores, from stored cells."""
    rows: list[Result] = []
    clean: dict[str, dict] = {}  # per model, the clean scores (read once)
    out = Path(opts.out_dir)
    if not opts.save_scores:  # the run's own score files: none may outlive the option
        store.remove_own("scores/")
    for cell, payload in stored:
        rows += [Result.from_json(r) for r in payload["rows"]]
        if not opts.save_scores:
            continue
        arrays = store.arrays(cell.id) if cell.task in ("clean", "ood", "heldout") else {}
        if FAULT_ARRAY in arrays:  # a numerical_fault flag: no scores to write
            continue
        if cell.task == "clean":
            clean[cell.model] = arrays
        elif cell.task == "ood" and cell.model in clean:
            _own_scores(store, cell.model, cell.params["set"])
            write_scores(out, cell.model, cell.params["set"], clean[cell.model], arrays)
        elif cell.task == "heldout":
            split = {side: {k.split("/", 1)[1]: v for k, v in arrays.items()
                            if k.startswith(f"{side}/")} for side in ("in", "out")}
            name = heldout_name(cell.params["k"])
            _own_scores(store, cell.model, name)
            write_scores(out, cell.model, name, split["in"], split["out"])
    write_results(Path(opts.out_dir), rows)
    return rows


def _own_scores(store: CellStore, model: str, dataset: str) -> None:
    """Record a score file as the run's own before it is written (robustbnn.run.ownership)."""
    path = scores_path(store.out_dir, model, dataset)
    store.record([path.relative_to(store.out_dir).as_posix()])


def _device_name(device: str) -> str | None:
    if device == "cuda" and torch.cuda.is_available():
        return torch.cuda.get_device_name()
    return None


def write_run_json(plan: Plan, finished: list[tuple[Cell, dict[str, Any]]], opts: BenchOptions,
                   report: RunReport, started: dt.datetime,
                   refused: dict[str, dict[str, Any]] | None = None) -> None:
    """Provenance: versions, device, config, data, per-model fit records, what ran, and the
    models the model contract refused (``refused``, which the leaderboard lists)."""
    cfg = plan.spec.cfg
    models: dict[str, dict[str, Any]] = {}
    contract: dict[str, dict[str, Any]] = {}
    for cell, stored in finished:
        if cell.task == "contract":  # its own entry: the models' seconds are their cells'
            contract[cell.model] = {**stored["info"], "seconds": stored["seconds"]}
            continue
        entry = models.setdefault(cell.model, {"seconds": 0.0})
        if cell.task == "train" and cell.params["heldout"] is not None:
            k = heldout_name(cell.params["heldout"])
            entry.setdefault("heldout", {})[k] = {**stored["info"], "seconds": stored["seconds"]}
        elif cell.task == "train":
            entry.update(stored["info"])
        entry["seconds"] += stored["seconds"]
    bundle = bench_data(plan.spec)
    data = {"name": bundle.name, "source": bundle.source, "fingerprint": bundle.fingerprint,
            "sizes": [len(bundle.train), len(bundle.val), len(bundle.test)]}
    labels = {c.id: c.label for c in plan.cells}
    run = {
        "robustbnn": __version__, "git_sha": git_sha(), "torch": torch.__version__,
        "python": platform.python_version(), "device": plan.spec.device,
        "gpu": _device_name(plan.spec.device), "seed": cfg.seed, "suite": opts.suite,
        "config": dataclasses.asdict(cfg), "data": data,
        "models": models, "argv": list(opts.argv) if opts.argv is not None else None,
        "executor": {"kind": opts.executor, "jobs": opts.jobs, "threads": plan.spec.threads},
        "cells": {"total": len(plan.cells), "reused": len(report.reused),
                  "ran": len(report.ran),
                  "failed": {labels[i]: e for i, e in report.failed.items()},
                  "skipped": {labels[i]: e for i, e in report.skipped.items()}},
        "contract": contract, "refused": refused or {},
        "started": started.isoformat(),
        "seconds": (dt.datetime.now(dt.timezone.utc) - started).total_seconds(),
    }
    write_json(Path(opts.out_dir) / "run.json", json.loads(json.dumps(run, default=str)))

