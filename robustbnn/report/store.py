"""The results store: atomic writes, ``results.jsonl`` (the source), ``results.csv``, ``run.json``.

``results.jsonl`` holds one :meth:`Result.to_json` object per line, ``setting`` a nested object
whose knobs keep their types and order; the reports read only this file. ``results.csv`` is
the same rows for people and spreadsheets, ``setting`` rendered by :func:`setting_label`.
"""

from __future__ import annotations

import json
import os
import re
import socket
import tempfile
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from robustbnn.errors import UserError
from robustbnn.report.schema import COLUMNS, Result, setting_label

__all__ = ["RunFolderError", "read_results", "remove_stale_temps", "results_frame", "umask_mode",
           "write_bytes_atomic", "write_json", "write_results", "write_text_atomic"]

RESULTS = "results.jsonl"


class RunFolderError(UserError):
    """A run folder that is missing, or whose results cannot be read."""


def umask_mode(path: str | Path) -> None:
    """Give a ``mkstemp``/``mkdtemp`` result the mode ``open``/``mkdir`` would have given it.

    The temporary files behind the atomic writes are created private (0600, 0700); without this
    a results folder or cache entry would be unreadable to the rest of a research group.
    """
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, (0o777 if os.path.isdir(path) else 0o666) & ~mask)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a unique temporary file beside ``path``, then rename it into place.

    Concurrent writers of one path never share a temporary file, and a reader sees either the
    old or the new content, never a partial one. The file gets the mode ``open`` would give.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{_OWNER}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        umask_mode(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


_OWNER = f"{socket.gethostname().replace('.', '_')}-{os.getpid()}"  # in every temp name
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


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8, newlines untranslated) atomically; see :func:`write_bytes_atomic`."""
    write_bytes_atomic(path, text.encode("utf-8"))


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
        RunFolderError: If ``results.jsonl`` is missing, corrupt (naming the line and field)
            or empty.
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
    except (UnicodeDecodeError, IsADirectoryError) as err:
        raise RunFolderError(f"{path} is corrupt ({err}); {hint}") from None
    rows = []
    for number, line in enumerate(text.split("\n"), start=1):  # JSON Lines: "\n" only
        if not line.strip():
            continue
        try:
            rows.append(Result.from_json(json.loads(line)))
        except ValueError as err:  # json.JSONDecodeError is a ValueError
            raise RunFolderError(f"{path} line {number} is corrupt ({err}); {hint}") from None
    if not rows:
        raise RunFolderError(f"{path} holds no results; {hint}")
    return results_frame(rows)


def write_json(path: Path, payload: dict) -> None:
    """Write pretty, key-sorted JSON atomically."""
    write_text_atomic(path, json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")
