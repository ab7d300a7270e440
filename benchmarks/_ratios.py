"""Ratios against baselines measured in the same run, for every benchmark in this folder.

Imported as ``benchmarks._ratios`` by the benchmark modules and by ``conftest.py``, so that
they share one table.

A benchmark group holds one scenario (say, the S = 32 attack step on ``mc_dropout``). Its
baselines run first (``measure(..., baseline=True)``), in file order; every later test of the
group records its median time relative to each of them as ``extra_info["speedup_vs_<name>"]``
(baseline median / our median: > 1 means we are faster). Nothing here asserts a time. At the
end of the session the ratios are printed as one table (``benchmarks/README.md`` keeps the
latest one, with the machine it came from).
"""

from __future__ import annotations

import logging
import os
import platform
from collections.abc import Callable
from typing import Any

import torch

log = logging.getLogger("robustbnn.benchmarks")

_BASELINES: dict[str, dict[str, float]] = {}  # group -> baseline name -> median seconds
_ROWS: list[tuple[str, str, str, float, float, float]] = []  # the summary table


def measure(benchmark: Any, group: str, name: str, fn: Callable[..., object], *args: object,
            baseline: bool = False, rounds: int = 5, warmup_rounds: int = 1,
            device: torch.device | None = None) -> float:
    """Time ``fn(*args)`` with pytest-benchmark and record it as a baseline or a candidate.

    Args:
        benchmark: The pytest-benchmark fixture.
        group: The scenario; ratios are only taken within a group.
        name: Short name of what is timed (a baseline's name is used in the ratio's key).
        fn: The work to time.
        *args: Its arguments.
        baseline: Store this median as a baseline of the group.
        rounds: Timed rounds (the median is used).
        warmup_rounds: Untimed rounds first.
        device: Where ``fn`` runs; on a GPU each round waits for its kernels.

    Returns:
        The median time in seconds.
    """
    benchmark.group = group
    if device is not None and device.type == "cuda":
        inner = fn

        def fn(*a: object) -> None:  # noqa: ANN202
            inner(*a)
            sync(device)

    benchmark.pedantic(fn, args=args, rounds=rounds, warmup_rounds=warmup_rounds, iterations=1)
    if benchmark.stats is None:  # --benchmark-disable: ran once, nothing timed
        return float("nan")
    median = float(benchmark.stats.stats.median)
    baselines = _BASELINES.setdefault(group, {})
    if baseline:
        baselines[name] = median
        log.warning("%s / %s (baseline): median %.4f s", group, name, median)
        return median
    if not baselines:
        log.warning("%s / %s: median %.4f s; no baseline of this group ran, so no ratio",
                    group, name, median)
    for base, base_median in baselines.items():
        speedup = base_median / median
        benchmark.extra_info[f"speedup_vs_{base}"] = round(speedup, 3)
        _ROWS.append((group, name, base, base_median, median, speedup))
        log.warning("%s / %s: median %.4f s, %.2fx faster than %s (%.4f s)", group, name,
                    median, speedup, base, base_median)
    return median


def note_ratio(group: str, name: str, base: str, base_value: float, value: float,
               ratio: float) -> None:
    """Add a ratio that is not a time (scaling, memory) to the end-of-session table."""
    _ROWS.append((group, name, base, base_value, value, ratio))


def machine() -> str:
    """One line naming the machine and the torch build the ratios came from."""
    return (f"{platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}, "
            f"{torch.get_num_threads()} threads"
            + (f", {torch.cuda.get_device_name()}" if torch.cuda.is_available() else ""))


def summary_lines() -> list[str]:
    """Every ratio of the session as a Markdown table (empty when none was taken)."""
    if not _ROWS:
        return []
    lines = [f"robustbnn benchmark ratios ({machine()})",
             "| group | ours | baseline | baseline value | our value | ratio |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {group} | {name} | {base} | {base_value:.4g} | {value:.4g} | {ratio:.2f} |"
              for group, name, base, base_value, value, ratio in _ROWS]
    return lines


def sync(device: torch.device) -> None:
    """Wait for queued GPU work, so that a timing covers it."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
