"""The results store: ``results.jsonl`` (the source), ``results.csv``, ``run.json``.

The atomic write lives in :mod:`robustbnn._atomic` and is re-exported here.

``results.jsonl`` holds one :meth:`Result.to_json` object per line, ``setting`` a nested object
whose knobs keep their types and order; the reports read only this file. ``results.csv`` is
the same rows for people and spreadsheets, ``setting`` rendered by :func:`setting_label`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from robustbnn._atomic import (
    OWNER,
    umask_mode,
    write_bytes_atomic,
    write_text_atomic,
    writer_alive,
)
from robustbnn.errors import UserError
from robustbnn.results.catalogue import RunRows
from robustbnn.results.schema import COLUMNS, Result, setting_label, text_problem, value_problem

__all__ = ["RunFolderError", "read_results", "remove_stale_temps", "results_frame", "umask_mode",
           "write_bytes_atomic", "write_json", "write_results", "write_text_atomic"]

RESULTS = "results.jsonl"


class RunFolderError(UserError):
    """A run folder that is missing, or whose results cannot be read."""


_OWNER = OWNER  # in every temp name (robustbnn._atomic)
_TEMP = re.compile(r"^\..+\.(?P<host>[^.]+)-(?P<pid>\d+)\.[^.]+\.tmp$")


def remove_stale_temps(folder: Path) -> int:
    """Remove temporary files that killed writers on this host left under ``folder``.

    A temporary file's name carries its writer's host and process id; only files of this host
    whose process no longer exists are removed, so a live writer (another run on the folder,
    a Ray worker on another machine) is never disturbed. Returns how many were removed.
    """
    host, removed = _OWNER.rsplit("-", 1)[0], 0
    for path in Path(folder).rglob(".*.tmp"):
        match = _TEMP.match(path.name)
        if match and match["host"] == host and not writer_alive(int(match["pid"])):
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

    Raises:
        RunFolderError: If a name holds a lone surrogate, before anything is written.
    """
    out_dir = Path(out_dir)
    for row in rows:  # a name no UTF-8 file can hold: one line, not a UnicodeEncodeError
        texts = [("model", row.model), ("task", row.task), ("dataset", row.dataset),
                 ("measure", row.measure), ("metric", row.metric)]
        texts += [(f"setting knob {k!r}", str(k)) for k in row.setting]
        texts += [(f"setting knob {k!r}", v) for k, v in row.setting.items() if isinstance(v, str)]
        problem = next(filter(None, (text_problem(f, t) for f, t in texts)), None)
        if problem:
            raise RunFolderError(f"cannot write the results to {out_dir}: a result of model "
                                 f"{ascii(row.model)}: {problem}; rename it (valid Unicode text)")
    lines = [json.dumps(r.to_json(), sort_keys=False) + "\n" for r in rows]
    write_text_atomic(out_dir / RESULTS, "".join(lines))
    frame = results_frame(rows)
    people = frame.assign(setting=[setting_label(s) for s in frame["setting"]])
    write_text_atomic(out_dir / "results.csv", people.to_csv(index=False, float_format="%.10g"))
    return frame


def read_results(run_dir: Path, *, run: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """A run folder's results from ``results.jsonl`` (``setting`` as dicts).

    A row is refused, in one line naming the file and the line, when its value is outside its
    metric's range or not finite where the metric cannot be
    (:func:`robustbnn.results.schema.value_problem`), when a name holds a lone surrogate, when
    it is not one of the rows the run wrote (given ``run``, its ``run.json``: another model,
    seed, task, dataset, setting, measure or metric, or an unknown metric;
    :class:`robustbnn.results.catalogue.RunRows`), or when it repeats an earlier row's result
    with another value. A result repeated with the same value is kept once.

    Args:
        run_dir: The run folder.
        run: Its parsed ``run.json``, to check every row against; None checks no membership.

    Raises:
        RunFolderError: If ``results.jsonl`` is missing, unreadable, corrupt (naming the line
            and field), holds a refused row, or is empty; every message names the file.
    """
    run_dir = Path(run_dir)
    path = run_dir / RESULTS
    hint = f"rerun robustbnn bench (`robustbnn bench --out {run_dir}`) to recreate it"
    try:
        data = path.read_bytes()
        text = data.decode("utf-8")
    except FileNotFoundError:
        if (run_dir / "results.csv").is_file():
            raise RunFolderError(f"{run_dir}: results.csv but no {RESULTS} (the structured "
                                 f"results the reports read); {hint}") from None
        raise RunFolderError(f"{run_dir}: no {RESULTS} here (not a run folder); {hint}") from None
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise RunFolderError(f"{path} line {line} is not UTF-8 text (byte "
                             f"0x{data[err.start]:02x}: {err.reason}); {hint}") from None
    except OSError as err:  # a folder, no permission, an I/O error
        raise RunFolderError(f"cannot read {path} ({err.strerror or err}); check the path and "
                             f"its permissions, or {hint}") from None
    rows: list[Result] = []
    seen: dict[tuple, tuple[int, float]] = {}
    ours = RunRows(run) if run is not None else None
    for number, line in enumerate(text.split("\n"), start=1):  # JSON Lines: "\n" only
        if not line.strip():
            continue
        try:
            row = _row(line)
        # json.JSONDecodeError is a ValueError; RecursionError: nesting deeper than the
        # parser's stack; OverflowError: an integer value too large for a float
        except (ValueError, RecursionError, OverflowError) as err:
            raise RunFolderError(f"{path} line {number} is corrupt ({err}); {hint}") from None
        problem = value_problem(row.metric, row.value)
        if problem:
            raise RunFolderError(f"{path} line {number}: {_who(row)}: {problem}; fix or remove "
                                 f"the line, or {hint}")
        problem = ours.problem(row) if ours is not None else None
        if problem:
            raise RunFolderError(f"{path} line {number}: {_who(row)}: {problem}; remove the "
                                 f"line, or {hint}")
        key = _key(row)
        if key in seen:
            first, value = seen[key]
            if not _same(value, row.value):
                raise RunFolderError(
                    f"{path} line {number}: {_who(row)}: {row.metric} {row.value!r} conflicts "
                    f"with {value!r} on line {first} for the same result (a run holds one "
                    f"value per result); remove the wrong line, or {hint}")
            continue  # the same result twice: counted once
        seen[key] = (number, row.value)
        rows.append(row)
    if not rows:
        raise RunFolderError(f"{path} holds no results; {hint}")
    return results_frame(rows)


def _key(row: Result) -> tuple:
    """What names one result: everything but its value (knob order does not matter)."""
    knobs = json.dumps(row.setting, sort_keys=True)
    return (row.model, row.seed, row.task, row.dataset, knobs, row.measure, row.metric)


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _who(row: Result) -> str:
    """A row's result in words, for a message."""
    measure = f", measure {row.measure!r}" if row.measure else ""
    knobs = f", setting {setting_label(row.setting)}" if row.setting else ""
    return (f"model {row.model!r}, seed {row.seed}, task {row.task!r}, dataset "
            f"{row.dataset!r}{knobs}{measure}")


def _row(line: str) -> Result:
    """One JSON line as a :class:`Result`, its seed within int64 (the frame's column type)."""
    row = Result.from_json(json.loads(line))
    if not -(2**63) <= row.seed < 2**63:
        raise ValueError(f"field 'seed' is out of range, got {row.seed}")
    return row


def write_json(path: Path, payload: dict) -> None:
    """Write pretty, key-sorted JSON atomically."""
    write_text_atomic(path, json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")
