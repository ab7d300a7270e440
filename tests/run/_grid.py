"""Helpers of the grid tests: the smoke suite as a subprocess, and results without cost rows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

TIMING = "seconds_per_1000_predictions"  # wall-clock: the one machine-dependent number


def bench_cmd(out: Path, *extra: str, cache: Path | None = None) -> list[str]:
    """``python -m robustbnn bench --suite smoke`` into ``out`` (one torch thread per cell)."""
    cache_args = ["--cache-dir", str(cache)] if cache else ["--no-cache"]
    return [sys.executable, "-m", "robustbnn", "bench", "--suite", "smoke", "--out", str(out),
            "--threads", "1", *cache_args, *extra]


def env() -> dict[str, str]:
    """The test's environment, with the checkout importable and unbuffered output."""
    root = str(Path(__file__).resolve().parents[2])
    return {**os.environ, "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}


def run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess:
    """Run ``cmd`` to completion, capturing text output."""
    return subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=600,
                          **kwargs)


def results(out: Path) -> pd.DataFrame:
    """``results.csv`` of a run folder without the timing rows."""
    frame = pd.read_csv(out / "results.csv", keep_default_na=False)
    return frame[frame["metric"] != TIMING].reset_index(drop=True)


def results_bytes(out: Path) -> bytes:
    """``results.csv`` without the timing rows, as bytes (for byte-identity checks)."""
    lines = (out / "results.csv").read_bytes().splitlines(keepends=True)
    return b"".join(line for line in lines if TIMING.encode() not in line)
