"""``robustbnn bench``: the config from the flags, the options, the run and what it says."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import sys
from pathlib import Path

import numpy as np
import torch

from robustbnn.cli.common import cache_dir, check_outputs, data_root, resolve_device
from robustbnn.cli.report import closing_summary
from robustbnn.errors import ConfigError
from robustbnn.portable import relative_argv
from robustbnn.results import names as n

__all__ = ["bench_options", "cmd_bench", "failure_summary"]


def bench_config(args: argparse.Namespace):  # noqa: ANN202 - a BenchConfig (imported lazily)
    """The suite's config with the flags' changes (not yet checked: see ``check_bench``)."""
    from robustbnn.suites import SUITES

    cfg = SUITES.get(args.suite)
    changes: dict = {}
    if args.models:
        changes["models"] = args.models
    if args.dataset:
        changes["dataset"] = args.dataset
    if args.seed is not None:
        changes["seed"] = args.seed
    if args.ood:
        changes["ood"] = args.ood
    if args.ood_preprocessing:
        changes["ood_preprocessing"] = args.ood_preprocessing
    if args.attacks:
        changes["attacks"] = args.attacks
    if args.robustness:
        changes["robustness"] = () if args.robustness == ("none",) else args.robustness
    if args.shift:
        changes["shift"] = () if args.shift == ("none",) else args.shift
    if args.targeted_samples:
        changes["targeted_s_attack"] = args.targeted_samples
    if args.memory_mb:
        changes["memory_mb"] = args.memory_mb
    if args.overrides:
        changes["overrides"] = (*cfg.overrides, *args.overrides)
    return dataclasses.replace(cfg, **changes)


def cmd_bench(args: argparse.Namespace, argv: list[str]) -> int:
    """``robustbnn bench``: check the config once, then print it, print the plan, or run it."""
    from robustbnn.bench import check_bench, print_plan, run_bench
    from robustbnn.settings import resolve_settings

    cfg = check_bench(bench_config(args), tuple(args.overrides))
    data_root(args)
    if args.print_config:
        settings = resolve_settings(cfg).to_json()
        payload = {"suite": args.suite, **dataclasses.asdict(cfg),
                   "model_configs": {m: settings["model_configs"][m] for m in cfg.models},
                   "attack_configs": settings["attack_configs"]}
        sys.stdout.write(json.dumps(payload, indent=2) + "\n")
        return 0
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    opts = bench_options(args, argv, args.out, args.suite)
    check_memory(opts.device, cfg.memory_mb)
    if args.plan:
        sys.stdout.write(print_plan(cfg, opts))
        return 0
    check_outputs(args, args.out)
    outcome = run_bench(cfg, opts)
    report = outcome.report
    if not args.quiet:
        sys.stderr.write(f"cells: {len(report.reused)} reused, {len(report.ran)} run, "
                         f"{len(report.failed)} failed, {len(report.skipped)} skipped\n")
    faults = [r for r in outcome.rows if r.task == n.NUMERICAL_FAULT]
    if faults:  # an incomplete run: exit 1, as for a failed cell (docs/running.md)
        from robustbnn.report.faults import fault_where

        where = ", ".join(dict.fromkeys(
            f"{r.model} {fault_where(str(r.setting.get('in_task', '?')), r.setting, r.dataset)}"
            for r in faults))
        sys.stderr.write(f"robustbnn: error: incomplete run: {len(faults)} cell(s) met NaN or "
                         f"inf logits ({where}); their rows are replaced by numerical_fault "
                         "flags, every number made of them reads 'partial' in the reports (the "
                         "leaderboard's 'numerical faults' column names them), and the other "
                         "cells are kept\n")
    if report.failed or report.skipped:
        sys.stderr.write(failure_summary(outcome, args.out))
        return 1
    closing_summary(args, [args.out], args.out,
                    f"wrote {len(outcome.rows)} results (results.csv, run.json) and the reports "
                    f"to {args.out}/")
    return 1 if faults else 0


def bench_options(args: argparse.Namespace, argv: list[str], out: Path,
                  suite: str):  # noqa: ANN202 - a BenchOptions (imported lazily)
    """Where and how the run goes, from the execution flags (shared with ``reproduce``)."""
    from robustbnn.bench import BenchOptions, auto_jobs

    device = resolve_device(args.device)
    jobs = args.jobs or auto_jobs(device, args.executor)
    check_counts(args, jobs)
    return BenchOptions(
        out_dir=out, suite=suite, device=device,
        data_root=data_root(args) if args.data_root else None,
        cache_dir=cache_dir(args)[0] if args.cache else None,
        download=args.download, progress=not args.quiet and sys.stderr.isatty(),
        save_scores=getattr(args, "save_scores", True), executor=args.executor,
        jobs=jobs,
        threads=args.threads, retries=args.retries, ray_address=args.ray_address,
        cell_timeout=args.cell_timeout, cell_memory_mb=args.cell_memory_mb,
        plugins=tuple(args.plugin), overwrite=args.overwrite,
        argv=tuple(relative_argv(argv)))


# Processes (--jobs) and torch threads per cell (--threads) beyond this many per CPU core only
# cost memory (each worker holds torch and a model: 300-800 MB) and cache thrashing: cells are
# CPU-bound, so no count above the core count runs faster, and 4x leaves room to experiment
# (and at least MIN_CAP, so a small machine still takes what --jobs auto gives a large one).
MAX_PER_CORE = 4
MIN_CAP = 8


def check_counts(args: argparse.Namespace, jobs: int) -> None:
    """``--jobs`` (``jobs``: as resolved) and ``--threads`` fit this machine's cores.

    Raises:
        ConfigError: Naming the flag, its value, the core count and the largest value.
    """
    if args.executor != "local":  # a Ray task's threads are its node's, not this machine's
        return
    from robustbnn.bench import cores as usable_cores

    cores = usable_cores()
    most = max(MIN_CAP, MAX_PER_CORE * cores)
    jobs_flag = "--jobs" if args.jobs else "$ROBUSTBNN_JOBS (--jobs auto)"
    for flag, value in ((jobs_flag, jobs), ("--threads", args.threads)):
        if value and value > most:
            raise ConfigError(f"{flag} {value} is more than {MAX_PER_CORE} per CPU core of this "
                              f"machine ({cores} cores): extra processes and threads only cost "
                              f"memory; use at most {most}")


def check_memory(device: torch.device, memory_mb: int) -> None:
    """The memory budget of one Monte Carlo pass fits the device it runs on.

    Raises:
        ConfigError: Naming the budget, the device's memory and the largest budget.
    """
    if device.type == "cuda":
        total, where = torch.cuda.get_device_properties(device).total_memory, "GPU"
    else:
        total, where = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "machine"
    if memory_mb * 2**20 > total:
        raise ConfigError(f"--memory-mb {memory_mb} is more than this {where}'s memory "
                          f"({total // 2**20} MiB); use at most {total // 2**20}, or less to "
                          "leave room for the data and the models")


def failure_summary(outcome, out: Path) -> str:  # noqa: ANN001 - a BenchOutcome
    """One line per failed cell: what failed, why, what did not run, and that rerunning resumes."""
    report = outcome.report
    cells = outcome.plan.by_id()
    refused = outcome.refused  # the model contract's refusals: one line per model
    every = set(refused) >= {c.model for c in cells.values()}
    lines = []
    for model, entry in refused.items():
        skipped = sum(c.model == model and i in report.skipped for i, c in cells.items())
        board = "" if every else "; the leaderboard lists it as refused"
        lines.append(f"robustbnn: error: {entry.get('message', entry['reason'])} "
                     f"({skipped} cell(s) of it did not run{board})\n")
    others = {i: e for i, e in report.failed.items() if cells[i].model not in refused}
    kept = len(report.reused) + len(report.ran)
    tail = (f"the {kept} finished cell(s) are kept in {out}/cells/, so rerunning the same "
            "command retries only what did not finish")
    lines += [f"robustbnn: error: cell '{cells[i].label}' failed ({e}); "
              f"{len(_dependents(cells, i) & set(report.skipped))} cell(s) depending on it did "
              f"not run; {tail}\n" for i, e in others.items()]
    if every:
        lines.append("robustbnn: error: every model of the run was refused by the model "
                     "contract, so no results or reports were written\n")
    return "".join(lines)


def _dependents(cells: dict, root: str) -> set[str]:
    """Ids of the cells that wait for cell ``root``, directly or through others."""
    waiting: dict[str, list[str]] = {}
    for i, cell in cells.items():
        for d in (*cell.deps, *cell.after):
            waiting.setdefault(d, []).append(i)
    found: set[str] = set()
    todo = [root]
    while todo:
        for i in waiting.get(todo.pop(), ()):
            if i not in found:
                found.add(i)
                todo.append(i)
    return found
