"""Atomic writes of the results store: ``results.csv``, ``results.jsonl`` and ``run.json``."""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from robustbnn.report.schema import COLUMNS, Result


def umask_mode(path: str | Path) -> None:
    """Give a ``mkstemp``/``mkdtemp`` result the mode ``open``/``mkdir`` would have given it.

    The temporary files behind the atomic writes are created private (0600, 0700); without this
    a results folder or cache entry would be unreadable to the rest of a research group.
    """
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, (0o777 if os.path.isdir(path) else 0o666) & ~mask)


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        umask_mode(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def results_frame(rows: Iterable[Result]) -> pd.DataFrame:
    """Rows as a DataFrame with the fixed column order and a float ``value`` column."""
    frame = pd.DataFrame([dataclasses.astuple(r) for r in rows], columns=list(COLUMNS))
    return frame.astype({"seed": "int64", "value": "float64"})


def write_results(out_dir: Path, rows: list[Result]) -> pd.DataFrame:
    """Write ``results.csv`` and ``results.jsonl`` (overwriting, never merging)."""
    frame = results_frame(rows)
    write_text_atomic(out_dir / "results.csv", frame.to_csv(index=False, float_format="%.10g"))
    lines = [json.dumps(dataclasses.asdict(r)) for r in rows]
    write_text_atomic(out_dir / "results.jsonl", "".join(line + "\n" for line in lines))
    return frame


def read_results(run_dir: Path) -> pd.DataFrame:
    """Read a run folder's ``results.csv`` (``measure`` may be empty)."""
    frame = pd.read_csv(run_dir / "results.csv", keep_default_na=False,
                        dtype={"measure": str, "setting": str})
    return frame.astype({"value": "float64"})


def write_json(path: Path, payload: dict) -> None:
    """Write pretty, key-sorted JSON atomically."""
    write_text_atomic(path, json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")
