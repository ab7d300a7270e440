"""Run an experiment: ``robustbnn bench`` once per run and seed, then its comparison report.

Every run is an ordinary bench folder under ``runs_dir/NAME/BUDGET/VARIANT/LABEL/seedS``, so
a rerun resumes cell by cell, ``robustbnn report`` re-renders any of them, and the executor
options (``--jobs``, ``--executor ray``) apply unchanged.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from robustbnn.bench import BenchOptions, BenchOutcome, check_bench, print_plan, run_bench
from robustbnn.errors import ConfigError
from robustbnn.reproduce.experiment import BUDGETS, Experiment, Run
from robustbnn.reproduce.report import RunResults, write_report
from robustbnn.results import names as n
from robustbnn.results.examples import read_run_examples

__all__ = ["ReproduceOptions", "plan_text", "reproduce", "run_folder"]

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class ReproduceOptions:
    """How to run an experiment.

    Attributes:
        budget: ``ci`` or ``full``.
        variant: One of the experiment's variants ("" = its default).
        seeds: Seeds (() = the experiment's default).
        out_dir: Where ``NAME.md``, ``NAME.csv`` and ``figures/`` go.
        runs_dir: Where the bench run folders go.
        bench: Bench options (device, data, cache, executor); ``out_dir``/``suite`` are set
            per run.
        runs: Run labels to run ((): all); the report shows the others as not run.
        command: The command line, for the report.
    """

    budget: str = "ci"
    variant: str = ""
    seeds: tuple[int, ...] = ()
    out_dir: Path = Path("reports/reproductions")
    runs_dir: Path = Path("reports/reproductions/runs")
    bench: BenchOptions = BenchOptions(out_dir=Path("."))
    runs: tuple[str, ...] = ()
    command: str = ""


def _check(exp: Experiment, opts: ReproduceOptions) -> tuple[str, tuple[int, ...]]:
    if opts.budget not in BUDGETS:
        raise ConfigError(f"unknown budget {opts.budget!r}; known: {list(BUDGETS)}")
    variant = opts.variant or exp.default_variant
    if variant not in exp.variants:
        raise ConfigError(f"{exp.name} has no variant {variant!r}; its variants: "
                          f"{list(exp.variants)}")
    return variant, opts.seeds or exp.seeds


def selected_runs(exp: Experiment, opts: ReproduceOptions, variant: str) -> tuple[Run, ...]:
    """The experiment's runs at the budget, limited to ``opts.runs`` when given.

    Raises:
        ConfigError: For a label the experiment does not have.
    """
    runs = exp.runs(opts.budget, variant)
    labels = [r.label for r in runs]
    unknown = [r for r in opts.runs if r not in labels]
    if unknown:
        raise ConfigError(f"{exp.name} has no run {unknown[0]!r}; its runs: {labels}")
    return tuple(r for r in runs if not opts.runs or r.label in opts.runs)


def _cell_seconds(folder: Path) -> float:
    """The seconds its cells took when they ran (the same after a resume), from run.json;
    a model loaded from the cache counts the training recorded with it."""
    try:
        run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0.0
    total = 0.0
    for model in run.get("models", {}).values():
        total += model.get("seconds", 0.0)
        if model.get("cached") and model.get("fit"):  # trained earlier: count its training
            total += model["fit"].get("seconds", 0.0)
    return total


def run_folder(exp: Experiment, opts: ReproduceOptions, variant: str, run: Run,
               seed: int) -> Path:
    """The bench folder of one run and seed."""
    return opts.runs_dir / exp.name / opts.budget / variant / run.label / f"seed{seed}"


def _bench_opts(exp: Experiment, opts: ReproduceOptions, variant: str, run: Run,
                seed: int) -> BenchOptions:
    return dataclasses.replace(opts.bench, out_dir=run_folder(exp, opts, variant, run, seed),
                               suite=f"reproduce:{exp.name}:{opts.budget}:{variant}:{run.label}")


def plan_text(exp: Experiment, opts: ReproduceOptions) -> str:
    """``--plan``: every run and seed with its cells and which are done; runs nothing."""
    variant, seeds = _check(exp, opts)
    out = [f"# {exp.name} ({exp.reproduces}), budget {opts.budget}, variant {variant}, "
           f"seeds {list(seeds)}\n"]
    for run in selected_runs(exp, opts, variant):
        for seed in seeds:
            cfg = check_bench(dataclasses.replace(run.config, seed=seed))
            folder = run_folder(exp, opts, variant, run, seed)
            out.append(f"## run {run.label}, seed {seed} -> {folder}\n")
            out.append(print_plan(cfg, _bench_opts(exp, opts, variant, run, seed)))
    return "".join(out)


def reproduce(exp: Experiment, opts: ReproduceOptions) -> tuple[Path, list[str]]:
    """Run every run x seed of ``exp`` at ``opts.budget`` and write its report.

    Returns:
        The report path, and one line per failed cell and per cell with a numerical fault
        (empty when everything ran).

    Raises:
        ConfigError: For an unknown budget or variant.
        UserError: What a bench run raises (missing data, a run folder of another config).
    """
    variant, seeds = _check(exp, opts)
    runs = selected_runs(exp, opts, variant)
    started = dt.datetime.now(dt.UTC)
    t0 = time.perf_counter()
    results: list[RunResults] = []
    failures: list[str] = []
    compute = 0.0
    total = len(runs) * len(seeds)
    for i, (run, seed) in enumerate(((r, s) for r in runs for s in seeds), 1):
        cfg = dataclasses.replace(run.config, seed=seed)
        if opts.bench.progress or not sys.stderr.isatty():
            log.info("[%d/%d] %s: run %s, seed %s", i, total, exp.name, run.label, seed)
        outcome: BenchOutcome = run_bench(check_bench(cfg),
                                          _bench_opts(exp, opts, variant, run, seed))
        labels = {c.id: c.label for c in outcome.plan.cells}
        failures += [f"{run.label} seed {seed}: cell '{labels[k]}' failed ({e})"
                     for k, e in outcome.report.failed.items()]
        failures += [f"{run.label} seed {seed}: {r.model} met NaN or inf logits in its "
                     f"{r.setting.get('in_task', '?')} cell on {r.dataset} (numerical_fault: an "
                     "incomplete run)" for r in outcome.rows if r.task == n.NUMERICAL_FAULT]
        folder = run_folder(exp, opts, variant, run, seed)
        recorded = folder / "run.json"  # absent when no cell finished
        info = json.loads(recorded.read_text(encoding="utf-8")) if recorded.exists() else {}
        results.append(RunResults(run.label, seed, cfg, outcome.rows, info,
                                  read_run_examples(folder, (r.model for r in outcome.rows))))
        compute += _cell_seconds(folder)
    seconds = time.perf_counter() - t0
    meta: dict[str, Any] = {"budget": opts.budget, "variant": variant, "seeds": list(seeds),
                            "seconds": seconds, "compute_seconds": compute,
                            "started": started.isoformat(),
                            "command": opts.command, "device": opts.bench.device.type,
                            "runs": [r.label for r in runs],
                            "all_runs": [r.label for r in exp.runs(opts.budget, variant)]}
    path = write_report(exp, results, meta, opts.out_dir)
    return path, failures
