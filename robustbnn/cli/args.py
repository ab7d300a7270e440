"""Argument types and the execution options shared by ``bench`` and ``reproduce``."""

from __future__ import annotations

import argparse

__all__ = ["add_execution", "jobs_arg", "non_negative_int", "positive_int", "seeds",
           "split_names"]


def split_names(text: str) -> tuple[str, ...]:
    """``A,B``: the names, blanks dropped."""
    return tuple(n.strip() for n in text.split(",") if n.strip())


def positive_int(text: str) -> int:
    """A whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def seeds(text: str) -> tuple[int, ...]:
    """``0,1,2``: seeds >= 0."""
    try:
        seeds = tuple(int(t) for t in text.split(",") if t.strip())
    except ValueError:
        seeds = ()
    if not seeds or any(s < 0 for s in seeds):
        raise argparse.ArgumentTypeError(f"expected comma-separated seeds >= 0 like 0,1,2, "
                                         f"got {text!r}")
    return seeds


def non_negative_int(text: str) -> int:
    """A whole number >= 0."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


def jobs_arg(text: str) -> int:
    """``--jobs``: a positive whole number, or ``auto`` (0: robustbnn.bench.auto_jobs)."""
    if text == "auto":
        return 0
    try:
        return positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected a positive whole number or auto, got {text!r}: pass --jobs 1 to run "
            "in-process, --jobs N for N worker processes or --jobs auto for one per CPU "
            "core") from None


def add_execution(parser: argparse.ArgumentParser, *, jobs: str) -> None:
    """The options of how cells run (shared by bench and reproduce; ``jobs``: the default)."""
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                        help="run device (default: auto = cuda when available, else cpu); "
                             "recorded in run.json")
    parser.add_argument("--cache-dir", metavar="DIR",
                        help="model cache (default: $ROBUSTBNN_CACHE, else the user cache "
                             "folder)")
    parser.add_argument("--cache", action=argparse.BooleanOptionalAction, default=True,
                        help="load and save trained models (default: on)")
    parser.add_argument("--download", action=argparse.BooleanOptionalAction, default=False,
                        help="download the missing dataset files the run reads into the "
                             "data root, each checked against its published checksum (needs "
                             "network; $ROBUSTBNN_MIRROR replaces the upstream sources; "
                             "default: off)")
    grid = parser.add_argument_group(
        "execution (none of these changes a number, except that the torch threads per cell "
        "change float rounding)")
    grid.add_argument("--jobs", type=jobs_arg, default=jobs_arg(jobs), metavar="N|auto",
                      help=f"run cells in N local worker processes, 1 = in-process; auto = one "
                           f"per CPU core (at most 8) on the CPU, 1 on a GPU or with Ray "
                           f"(default: {jobs}; $ROBUSTBNN_JOBS sets what auto means)")
    grid.add_argument("--executor", choices=["local", "ray"], default="local",
                      help="local (default; --jobs for a process pool) or ray: each cell a Ray "
                           "task (pip install 'robustbnn[ray]')")
    grid.add_argument("--ray-address", metavar="ADDR",
                      help="Ray cluster to join (default: $RAY_ADDRESS, else a local Ray)")
    grid.add_argument("--threads", type=positive_int, metavar="T",
                      help="torch threads per cell (default: all cores for one job, "
                           "cores / N with --jobs N, 1 per Ray task); results can differ "
                           "in the last bits "
                           "between thread counts")
    grid.add_argument("--retries", type=non_negative_int, default=1, metavar="K",
                      help="retry a failing cell K times before reporting it (default 1)")
    grid.add_argument("--overwrite", action="store_true",
                      help="replace the results of another run configuration in --out "
                           "(default: refuse)")
