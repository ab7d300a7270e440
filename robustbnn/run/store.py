"""The cell store: one file per finished cell under ``<run>/cells/``, written once, atomically.

``<id>.json`` holds the cell, its rows and its info; ``<id>.npz`` its arrays (written first,
so a cell is done exactly when its JSON exists and records the current
:data:`~robustbnn.run.cells.OUTPUT_FORMAT`; one written by older task code is recomputed).
A run folder belongs to one run configuration, recorded in ``cells/identity.json``: a second
configuration is refused (or, with ``overwrite``, replaces the first). ``results.csv`` and
every report are assembled from the cell files, so an interrupted run, resumed, ends with the
bytes of an uninterrupted one.
"""

from __future__ import annotations

import io
import json
import logging
import shutil
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock

from robustbnn.errors import UserError
from robustbnn.report.store import write_bytes_atomic, write_text_atomic
from robustbnn.run.cells import OUTPUT_FORMAT, Cell, CellOutcome, canonical_json

__all__ = ["CellStore", "RunFolderConflict"]

log = logging.getLogger(__name__)

DERIVED = ("results.csv", "results.jsonl", "run.json", "scores")  # what a run writes itself


class RunFolderConflict(UserError):
    """The output folder holds a run of another configuration."""


class CellStore:
    """Finished cells of one run folder.

    Args:
        out_dir: The run folder; cells live in ``out_dir/cells``.
    """

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = Path(out_dir)
        self.dir = self.out_dir / "cells"

    def json_path(self, cell_id: str) -> Path:
        """Where a finished cell's rows live."""
        return self.dir / f"{cell_id}.json"

    def done_ids(self) -> set[str]:
        """Ids of every finished cell in the folder (of the current output format)."""
        if not self.dir.is_dir():
            return set()
        return {p.stem for p in self.dir.glob("*.json")
                if p.name != "identity.json" and self.is_done(p.stem)}

    def is_done(self, cell_id: str) -> bool:
        """Whether the cell's JSON exists and was written by task code of the current
        :data:`~robustbnn.run.cells.OUTPUT_FORMAT` (a damaged file counts as done, so that
        :meth:`read` names it)."""
        path = self.json_path(cell_id)
        if not path.is_file():
            return False
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return True
        return not isinstance(payload, dict) or payload.get("format", 1) == OUTPUT_FORMAT

    def lock(self, cell_id: str) -> FileLock:
        """The cell's file lock: a cell runs in one process at a time, across runs."""
        (self.dir / "locks").mkdir(parents=True, exist_ok=True)
        return FileLock(self.dir / "locks" / f"{cell_id}.lock")

    def write(self, cell: Cell, outcome: CellOutcome) -> None:
        """Store a finished cell: arrays first, then the JSON that marks it done."""
        if outcome.arrays:
            buf = io.BytesIO()
            np.savez_compressed(buf, **outcome.arrays)
            write_bytes_atomic(self.dir / f"{cell.id}.npz", buf.getvalue())
        payload = {"format": OUTPUT_FORMAT, "cell": cell.describe(), "rows": outcome.rows,
                   "info": outcome.info, "seconds": outcome.seconds,
                   "arrays": sorted(outcome.arrays)}
        write_text_atomic(self.json_path(cell.id), json.dumps(payload, indent=1) + "\n")

    def read(self, cell_id: str) -> dict[str, Any]:
        """A finished cell's stored JSON (``rows``, ``info``, ``seconds``, ``cell``).

        Raises:
            UserError: For an unreadable or damaged cell file; names it and the way out.
        """
        path = self.json_path(cell_id)
        try:
            payload = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(payload, dict) or payload["cell"]["id"] != cell_id:
                raise ValueError("it belongs to another cell")
            return payload
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise UserError(f"{path} is damaged ({err}); delete it and rerun to recompute "
                            "that cell") from None

    def arrays(self, cell_id: str) -> dict[str, np.ndarray]:
        """A finished cell's arrays (empty when it has none)."""
        path = self.dir / f"{cell_id}.npz"
        if not path.is_file():
            return {}
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}

    def claim(self, identity: dict[str, Any], *, overwrite: bool = False) -> None:
        """Make the folder this run configuration's, or refuse if it holds another's.

        Raises:
            RunFolderConflict: When the folder holds results of another configuration (or of
                an older robustbnn without ``cells/``), unless ``overwrite``.
        """
        path = self.dir / "identity.json"
        text = canonical_json(identity)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        (self.dir / "locks").mkdir(parents=True, exist_ok=True)
        with FileLock(self.dir / "locks" / "run.lock"):
            if path.is_file() and path.read_text(encoding="utf-8").strip() == text:
                return
            theirs = path.is_file() or any((self.out_dir / n).exists() for n in DERIVED)
            if theirs and not overwrite:
                raise RunFolderConflict(
                    f"{self.out_dir} holds the results of another run configuration (another "
                    "suite, seed, model set, setting, dataset or device); pass --out NEW_DIR "
                    "for this run, or --overwrite to replace that run's results")
            if theirs:
                log.warning("--overwrite: removing the earlier run's results in %s",
                            self.out_dir)
                for name in DERIVED:
                    target = self.out_dir / name
                    if target.is_dir():
                        shutil.rmtree(target)
                    elif target.exists():
                        target.unlink()
                for old in self.dir.glob("*"):
                    if old.name != "locks":
                        shutil.rmtree(old) if old.is_dir() else old.unlink()
            write_text_atomic(path, text + "\n")
