"""Argument types and the execution options shared by ``bench`` and ``reproduce``."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

__all__ = ["MAX_RETRIES", "add_execution", "dataset_name", "folder", "folder_path", "jobs_arg",
           "non_negative_int", "positive_int", "positive_seconds", "retries_arg", "seeds",
           "split_names", "whole_number"]


def split_names(text: str) -> tuple[str, ...]:
    """``A,B``: the names, blanks dropped; no name at all is refused (it would silently mean
    the default)."""
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated names, got {text!r}; omit "
                                         "the flag to get the default")
    return names


def folder(text: str) -> str:
    """A folder; an empty one is refused (it would silently mean the default)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a folder, got {text!r}; omit the flag to "
                                         "get the default")
    return text


def folder_path(text: str) -> Path:
    """An output or run folder; an empty one is refused (``Path("")`` is the working folder,
    where no run belongs unasked)."""
    return Path(folder(text))


def dataset_name(text: str) -> str:
    """``--dataset``: a name; an empty one is refused (it would silently mean the suite's)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"expected a dataset name, got {text!r}; omit the flag "
                                         "to get the suite's (see `robustbnn datasets`)")
    return text


def _whole(text: str, what: str) -> int | None:
    """The whole number ``text`` writes in ASCII digits (an optional sign), else None.

    ``int()`` also reads other scripts' digits (``int("٣") == 3``); a flag takes 0-9 only.

    Raises:
        argparse.ArgumentTypeError: When ``text`` holds a digit other than ASCII 0-9,
            saying it expected ``what``.
    """
    if any(ch.isdigit() and not ch.isascii() for ch in text):
        raise argparse.ArgumentTypeError(f"expected {what} in the ASCII digits 0-9, got "
                                         f"{text!r}")
    return int(text) if re.fullmatch(r"\s*[+-]?[0-9]+\s*", text) else None


def whole_number(text: str) -> int:
    """A whole number in ASCII digits (``--seed``: its range is the config's to check)."""
    value = _whole(text, "a whole number")
    if value is None:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """A whole number >= 1."""
    value = _whole(text, "a positive whole number")
    if value is None or value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def seeds(text: str) -> tuple[int, ...]:
    """``0,1,2``: seeds >= 0."""
    what = "comma-separated seeds >= 0 like 0,1,2"
    _whole(text, what)  # refuses other scripts' digits, naming the whole value
    found = [_whole(t, what) for t in text.split(",") if t.strip()]
    seeds = () if None in found else tuple(found)
    if not seeds or any(s < 0 for s in seeds):
        raise argparse.ArgumentTypeError(f"expected comma-separated seeds >= 0 like 0,1,2, "
                                         f"got {text!r}")
    return seeds


def non_negative_int(text: str) -> int:
    """A whole number >= 0."""
    value = _whole(text, "a whole number >= 0")
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, got {text!r}")
    return value


# A cell that failed this many retries in a row (each a fresh start of the cell) will not pass
# on the next; the retries a run needs are for the rare transient fault.
MAX_RETRIES = 10


def retries_arg(text: str) -> int:
    """``--retries``: a whole number from 0 to :data:`MAX_RETRIES`."""
    value = _whole(text, f"a whole number from 0 to {MAX_RETRIES}")
    if value is None or not 0 <= value <= MAX_RETRIES:
        raise argparse.ArgumentTypeError(
            f"expected a whole number from 0 to {MAX_RETRIES}, got {text!r}: a cell that "
            f"fails {MAX_RETRIES + 1} tries in a row will not pass on the next")
    return value


def positive_seconds(text: str) -> float:
    """A finite number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not (0 < value < float("inf")) or not text.strip().isascii():
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


def jobs_arg(text: str) -> int:
    """``--jobs``: a positive whole number, or ``auto`` (0: robustbnn.bench.auto_jobs)."""
    if text == "auto":
        return 0
    _whole(text, "a positive whole number or auto")  # other scripts' digits: their own line
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
    parser.add_argument("--cache-dir", type=folder, metavar="DIR",
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
    grid.add_argument("--retries", type=retries_arg, default=1, metavar="K",
                      help=f"retry a failing cell K times before reporting it, at most "
                           f"{MAX_RETRIES}, only for failures a retry can fix (a dead worker, "
                           "a lost Ray node, a passing OS error) (default 1)")
    grid.add_argument("--cell-timeout", type=positive_seconds, metavar="SECONDS",
                      help="fail a cell that runs longer than this, in one line; the rest of "
                           "the run continues (default: no limit). With a limit, cells run "
                           "in worker processes (one with --jobs 1), and a cell that does not "
                           "stop at the alarm is killed 2 s later, whatever its code does "
                           "with signals; under --executor ray only the alarm acts")
    grid.add_argument("--cell-memory-mb", type=positive_int, metavar="MB",
                      help="fail a cell that grows its process's memory by more than this, in "
                           "one line; the rest of the run continues (default: no limit); "
                           "enforced as --cell-timeout is")
    grid.add_argument("--overwrite", action="store_true",
                      help="replace the results of another run configuration in --out "
                           "(default: refuse)")
