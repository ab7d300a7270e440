"""The results store: ``results.jsonl`` (the source), ``results.csv``, ``run.json``.

The atomic write lives in :mod:`robustbnn._atomic` and is re-exported here.

``results.jsonl`` holds one :meth:`Result.to_json` object per line, ``setting`` a nested object
whose knobs keep their types and order; the reports read only this file. ``results.csv`` is
the same rows for people and spreadsheets, ``setting`` rendered by :func:`setting_label`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from robustbnn._atomic import OWNER, umask_mode, write_bytes_atomic, write_text_atomic
from robustbnn.errors import UserError
from robustbnn.report.schema import COLUMNS, Result, setting_label

__all__ = ["RunFolderError", "read_results", "remove_stale_temps", "results_frame", "umask_mode",
           "write_bytes_atomic", "write_json", "write_results", "write_text_atomic"]

RESULTS = "results.jsonl"


class RunFolderError(UserError):
    """A run folder that is missing, or whose results cannot be read."""


_OWNER = OWNER  # in every temp name (robustbnn._atomic)
_TEMP = re.compile(r"^\..+\.(?P<host>[^.]+)-(?P<pid>\d+)\.[^.]+\.tmp$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def remove_stale_temps(folder: Path) -> int:
    """Remove temporary files that killed writers on this host left under ``folder``.

    A temporary file's name carries its writer's host and process id; only files of this host
    whose process no longer exists are removed, so a live writer (another run on the folder,
    a Ray worker on another machine) is never disturbed. Returns how many were removed.
    """
    host, removed = _OWNER.rsplit("-", 1)[0], 0
    for path in Path(folder).rglob(".*.tmp"):
        match = _TEMP.match(path.name)
        if match and match["host"] == host and not _alive(int(match["pid"])):
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def results_frame(rows: Iterable[Result]) -> pd.DataFrame:
    """Rows as a DataFrame with the fixed columns; ``setting`` holds dicts, ``value`` floats."""
    frame = pd.DataFrame([(r.model, r.seed, r.task, r.dataset, dict(r.setting), r.measure,
                           r.metric, r.value) for r in rows], columns=list(COLUMNS))
    return frame.astype({"seed": "int64", "value": "float64"})


def write_results(out_dir: Path, rows: list[Result]) -> pd.DataFrame:
    """Write ``results.jsonl`` and ``results.csv`` (overwriting, never merging).

    Returns:
        The rows as :func:`results_frame` gives them.
    """
    out_dir = Path(out_dir)
    lines = [json.dumps(r.to_json(), sort_keys=False) + "\n" for r in rows]
    write_text_atomic(out_dir / RESULTS, "".join(lines))
    frame = results_frame(rows)
    people = frame.assign(setting=[setting_label(s) for s in frame["setting"]])
    write_text_atomic(out_dir / "results.csv", people.to_csv(index=False, float_format="%.10g"))
    return frame


def read_results(run_dir: Path) -> pd.DataFrame:
    """A run folder's results from ``results.jsonl`` (``setting`` as dicts).

    Raises:
        RunFolderError: If ``results.jsonl`` is missing, unreadable, corrupt (naming the line
            and field) or empty; every message names the file.
    """
    run_dir = Path(run_dir)
    path = run_dir / RESULTS
    hint = f"rerun robustbnn bench (`robustbnn bench --out {run_dir}`) to recreate it"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if (run_dir / "results.csv").is_file():
            raise RunFolderError(f"{run_dir}: results.csv but no {RESULTS} (the structured "
                                 f"results the reports read); {hint}") from None
        raise RunFolderError(f"{run_dir}: no {RESULTS} here (not a run folder); {hint}") from None
    except UnicodeDecodeError as err:
        raise RunFolderError(f"{path} is corrupt ({err}); {hint}") from None
    except OSError as err:  # a folder, no permission, an I/O error
        raise RunFolderError(f"cannot read {path} ({err.strerror or err}); check the path and "
                             f"its permissions, or {hint}") from None
    rows = []
    for number, line in enumerate(text.split("\n"), start=1):  # JSON Lines: "\n" only
        if not line.strip():
            continue
        try:
            rows.append(_row(line))
        # json.JSONDecodeError is a ValueError; RecursionError: nesting deeper than the
        # parser's stack; OverflowError: an integer value too large for a float
        except (ValueError, RecursionError, OverflowError) as err:
            raise RunFolderError(f"{path} line {number} is corrupt ({err}); {hint}") from None
    if not rows:
        raise RunFolderError(f"{path} holds no results; {hint}")
    return results_frame(rows)


def _row(line: str) -> Result:
    """One JSON line as a :class:`Result`, its seed within int64 (the frame's column type)."""
    row = Result.from_json(json.loads(line))
    if not -(2**63) <= row.seed < 2**63:
        raise ValueError(f"field 'seed' is out of range, got {row.seed}")
    return row


def write_json(path: Path, payload: dict) -> None:
    """Write pretty, key-sorted JSON atomically."""
    write_text_atomic(path, json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")
