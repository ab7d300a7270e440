"""``robustbnn bench``: a suite's config -> a plan of cells -> an executor -> results and reports.

The run goes down the floors once: :func:`run_bench` builds the plan
(:mod:`robustbnn.run.plan`), claims the run folder, runs the unfinished cells on the chosen
executor (:mod:`robustbnn.run.runner`), then assembles ``results.csv``/``.jsonl``, the
per-example scores, ``run.json`` and every report from the stored cells alone.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import os
from pathlib import Path
from typing import Any

import torch

from robustbnn.attacks import ATTACKS
from robustbnn.bench_config import BenchConfig, check_model_memory
from robustbnn.config import literal, parse_set
from robustbnn.data import DATASETS
from robustbnn.data.heldout import parse_heldout
from robustbnn.data.ood_sets import check_ood_name, check_preprocessing
from robustbnn.data.shift.sets import check_dataset_fits, check_levels
from robustbnn.errors import ConfigError
from robustbnn.models import MODELS
from robustbnn.ood.extra import EXTRA_MEASURES
from robustbnn.plugins import plugin_paths
from robustbnn.results.schema import Result
from robustbnn.results.store import remove_stale_temps
from robustbnn.run.assemble import assemble, finished_cells, write_run_json
from robustbnn.run.cache_needs import check_cache
from robustbnn.run.cells import CellKind
from robustbnn.run.context import RunSpec, ood_images
from robustbnn.run.executors import make_executor
from robustbnn.run.limits import CellLimits
from robustbnn.run.plan import Plan, build_plan, format_plan
from robustbnn.run.runner import RunReport, run_plan
from robustbnn.run.store import CellStore
from robustbnn.settings import Settings, check_owners, resolve_settings
from robustbnn.training.cache_folders import remove_dead_temps

__all__ = ["BenchOptions", "BenchOutcome", "auto_jobs", "check_bench", "check_names", "cores",
           "make_spec", "plan_bench", "print_plan", "resolve_models", "run_bench"]

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
        retries: Retries of a failing cell before it is reported (only of failures a retry
            can fix: :mod:`robustbnn.run.retry`).
        cell_timeout: Seconds a cell may run (None: no limit; :mod:`robustbnn.run.limits`).
        cell_memory_mb: MiB by which a cell may grow its process's memory (None: no limit).
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
    cell_timeout: float | None = None
    cell_memory_mb: int | None = None
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
    """Fill in every registered model that is ``in_default`` when the config names none;
    check the names."""
    cfg = cfg if cfg.models else dataclasses.replace(cfg, models=tuple(
        n for n in MODELS.names() if MODELS.get(n).in_default))
    for name in (*cfg.models, *cfg.heldout_models):
        MODELS.get(name)
    return cfg


def check_bench(cfg: BenchConfig, user: tuple[str, ...] = ()) -> BenchConfig:
    """Check every value of a run before any work: the config's types and ranges, every name
    (models, dataset, attacks, OOD sets, measures), the ``--set`` overrides and every model
    config they give (types and ranges, and that the model's training fits this machine:
    :func:`check_model_sizes`).

    The one check of a run: :func:`plan_bench`, :func:`print_plan` and :func:`run_bench` take
    the config it returns and check nothing again.

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
    check_owners(cfg, user)  # every --set names a model or attack (of the run, for user sets)
    check_names(cfg)
    check_preprocessing(cfg.ood_preprocessing)
    DATASETS.get(cfg.dataset)
    # every model and attack config: types and ranges, then each model's size
    check_model_sizes(cfg, resolve_settings(cfg), user)
    return cfg


# The input shape and classes of a dataset without a recipe (a plug-in's): those of MNIST,
# the shape of every built-in set, for the size check alone.
FALLBACK_SHAPE: tuple[tuple[int, ...], int] = ((1, 28, 28), 10)


def dataset_shape(name: str) -> tuple[tuple[int, ...], int]:
    """The input shape ``(1, H, W)`` and class count of dataset ``name``, from its recipe
    (no data is read); :data:`FALLBACK_SHAPE` for a dataset without one."""
    from robustbnn.data.recipes import load_recipe, recipe_names

    if name not in recipe_names():
        return FALLBACK_SHAPE
    recipe = load_recipe(name)
    return (1, *map(int, recipe["image_shape"])), int(recipe["num_classes"])


def check_model_sizes(cfg: BenchConfig, settings: Settings, user: tuple[str, ...] = ()) -> None:
    """Every model of the run can train on this machine beside the Monte Carlo budget
    (:func:`robustbnn.bench_config.check_model_memory`: its parameters counted on the
    ``meta`` device); a refusal names the ``--set`` items that sized the model (the user's
    when any of theirs did).

    Raises:
        ConfigError: Naming the model, the settings, the estimate and the limit.
    """
    shape, classes = dataset_shape(cfg.dataset)
    for name, model_cfg in settings.models:
        fields = {f.name for f in dataclasses.fields(model_cfg)}
        last: dict[str, str] = {}  # field -> the item that set it last
        for item in cfg.overrides:
            [(owner, field, value)] = parse_set([item])
            if owner == name or (owner == "*" and field in fields):
                sized = literal(value)
                if isinstance(sized, tuple) or (isinstance(sized, int)
                                                and not isinstance(sized, bool)):
                    last[field] = item
        theirs = [item for item in last.values() if item in user]
        check_model_memory(name, MODELS.get(name), model_cfg, shape, classes,
                           memory_mb=cfg.memory_mb, given=tuple(theirs or last.values()))


IN_SPLITS = ("test", "val")


def check_names(cfg: BenchConfig) -> None:
    """Every model, attack, OOD set, measure and shift level named by ``cfg`` exists, and its
    OOD options fit its sets (before any work starts).

    Raises:
        ConfigError: For a bad ``ood_in_split``, ``ood_counts``, shift angles, or a shift the
            dataset's images cannot take (MNIST-C on a dataset not 28x28).
        UnknownNameError: For an unknown model, attack, OOD set, measure or corruption.
    """
    if cfg.ood_in_split not in IN_SPLITS:
        raise ConfigError(f"ood_in_split must be one of {list(IN_SPLITS)}, got "
                          f"{cfg.ood_in_split!r}")
    unknown = sorted(set(dict(cfg.ood_counts)) - set(cfg.ood))
    if unknown:
        raise ConfigError(f"ood_counts names sets the run does not score: {unknown}; "
                          f"its sets: {list(cfg.ood)}")
    for name in (*cfg.models, *cfg.heldout_models, *filter(None, (cfg.fidelity_reference,))):
        MODELS.get(name)
    for attack in cfg.attacks:
        ATTACKS.get(attack)
    for ood in cfg.adv_ood_sets:
        check_ood_name(ood)
    check_levels(cfg.shift, cfg.shift_angles, cfg.shift_corruptions)
    check_dataset_fits(cfg.shift, cfg.dataset)
    for measure in cfg.extra_measures:
        EXTRA_MEASURES.get(measure)
    for ood in cfg.ood:
        if parse_heldout(ood) is None:
            check_ood_name(ood)


JOBS_ENV = "ROBUSTBNN_JOBS"
MAX_AUTO_JOBS = 8


def auto_jobs(device: torch.device, executor: str = "local") -> int:
    """What ``--jobs auto`` means: ``$ROBUSTBNN_JOBS`` when set, else one worker per usable
    CPU core (at most :data:`MAX_AUTO_JOBS`) for a local run on the CPU, and 1 on a GPU (one
    process keeps the device busy) or with Ray (which schedules cells itself).

    On the CPU two one-thread workers keep two cores busier than one two-thread process on
    these small matrices: the default suite took 0.68 of the time (docs/running.md, "Wall time").

    Raises:
        ConfigError: If ``$ROBUSTBNN_JOBS`` is not a positive whole number.
    """
    value = os.environ.get(JOBS_ENV)
    if value is not None:
        value = value.strip()
        if not value:
            raise ConfigError(f"${JOBS_ENV} is set but empty; unset it to get the default")
        if not (value.isascii() and value.isdigit()) or int(value) < 1:
            raise ConfigError(f"${JOBS_ENV} is {value!r}, not a positive whole number; set it "
                              f"to the number of worker processes (1 = in-process) or unset it")
        return int(value)
    if device.type != "cpu" or executor != "local":
        return 1
    return max(1, min(cores(), MAX_AUTO_JOBS))


def cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


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
    """The plan of a config :func:`check_bench` returned (loads the training data, trains
    nothing), and the store of its run folder."""
    return build_plan(make_spec(cfg, opts)), CellStore(Path(opts.out_dir))


def print_plan(cfg: BenchConfig, opts: BenchOptions) -> str:
    """``--plan`` of a config :func:`check_bench` returned: the cells, their dependencies and
    which are done; runs nothing."""
    plan, store = plan_bench(cfg, opts)
    return format_plan(plan, store.done_ids([c.id for c in plan.cells]))


def run_bench(cfg: BenchConfig, opts: BenchOptions) -> BenchOutcome:
    """Run the plan's unfinished cells, then assemble results and reports from the store.

    Args:
        cfg: The run's config, as :func:`check_bench` returned it.
        opts: Where and how it runs.

    Raises:
        UserError: For unknown names, missing or corrupt data, a run folder of another
            configuration.
    """
    started = dt.datetime.now(dt.UTC)
    plan, store = plan_bench(cfg, opts)
    check_cache(plan)  # a read-only cache that lacks a model: refused before anything is written
    Path(opts.out_dir).mkdir(parents=True, exist_ok=True)
    with store.hold():  # from the claim to the last report: a second run waits
        store.claim(plan.identity, overwrite=opts.overwrite,
                    cells=[c.id for c in plan.cells])
        if removed := remove_stale_temps(Path(opts.out_dir)):
            log.info("removed %d temporary files of killed runs in %s", removed, opts.out_dir)
        if removed := remove_dead_temps(Path(plan.spec.cache_dir)):
            log.info("removed %d temporary folders of killed writers in the model cache %s",
                     removed, plan.spec.cache_dir)
        for cell in plan.cells:  # every OOD set loads (and is verified) before any training
            if cell.task == CellKind.OOD:
                ood_images(plan.spec, cell.params["set"])
        limits = CellLimits(opts.cell_timeout, opts.cell_memory_mb)
        executor = make_executor(opts.executor, jobs=opts.jobs, threads=plan.spec.threads,
                                 ray_address=opts.ray_address, limits=limits)
        try:
            report = run_plan(plan, executor, store, retries=opts.retries,
                              progress=opts.progress, limits=limits)
        finally:
            executor.close()
        refused = refusals(plan, report)
        # No cell with results finished (a passed contract has none), or every model was
        # refused: no results, no reports (the CLI says why).
        tasks = {c.id: c.task for c in plan.cells}
        scored = [i for i in (*report.reused, *report.ran) if tasks[i] != CellKind.CONTRACT]
        if not scored or set(refused) >= set(_models(plan)):
            return BenchOutcome([], report, plan, refused)
        # A refused model gets no numbers, not even those of cells an earlier run stored.
        stored = [(c, p) for c, p in finished_cells(plan, store, report)
                  if c.model not in refused]
        rows = assemble(stored, store, save_scores=opts.save_scores)
        face = {"out_dir": str(opts.out_dir), "suite": opts.suite,
                "argv": list(opts.argv) if opts.argv is not None else None,
                "executor": {"kind": opts.executor, "jobs": opts.jobs,
                             "threads": plan.spec.threads}}
        write_run_json(plan, stored, report, started, face, refused, rows=rows)
        # Imported here: drawing needs matplotlib, which a --plan or a refused run never does.
        from robustbnn.report.render import render

        render([Path(opts.out_dir)], Path(opts.out_dir))
    return BenchOutcome(rows, report, plan, refused)


def _models(plan: Plan) -> list[str]:
    """The run's models, in plan order."""
    return list(dict.fromkeys(c.model for c in plan.cells))


def refusals(plan: Plan, report: RunReport) -> dict[str, dict[str, Any]]:
    """The models whose contract cell refused them: ``{model: {"clauses", "reason"}}``, in
    plan order."""
    return {m: report.refused[m] for m in _models(plan) if m in report.refused}
