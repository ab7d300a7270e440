"""The cell store: one file per finished cell under ``<run>/cells/``, written once, atomically.

``<id>.json`` holds the cell, its rows and its info; ``<id>.npz`` its arrays (written first,
so a cell is done exactly when its JSON exists and records the current
:data:`~robustbnn.run.cells.OUTPUT_FORMAT`; one written by older task code is recomputed).
Cells are verified like cache entries (:mod:`~robustbnn.training.cache`): the JSON records the
sha256 of its own content and of its ``.npz`` (``digest``), and a cell whose files are missing,
truncated, unreadable or edited does not count as done: it is recomputed, with one warning
naming the file (:mod:`~robustbnn.run.cell_file`: the two files' content and its checks).

A run folder belongs to one run configuration, recorded in ``cells/identity.json``: a second
configuration is refused (or, with ``overwrite``, replaces the first: its own files are moved
aside, nothing else is touched; :mod:`robustbnn.run.ownership`). A run holds the folder's run
lock (:meth:`CellStore.hold`) from its claim to its last report, so two runs on one folder
never interleave. ``results.csv`` and every report are assembled from the cell files, so an
interrupted run, resumed, ends with the bytes of an uninterrupted one.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
from filelock import FileLock, Timeout

from robustbnn.errors import UserError
from robustbnn.results.examples import PREFIX as EXAMPLES_PREFIX
from robustbnn.results.store import write_bytes_atomic, write_text_atomic
from robustbnn.run.cell_file import CellMissing, Outdated, encode, verify
from robustbnn.run.cells import Cell, CellOutcome, canonical_json
from robustbnn.run.ownership import RUN_FILES, RunFolder

__all__ = ["CellStore", "RunFolderConflict"]

log = logging.getLogger(__name__)


class RunFolderConflict(UserError):
    """The output folder holds a run of another configuration, or files robustbnn would
    replace but did not write."""


class CellStore:
    """Finished cells of one run folder.

    Args:
        out_dir: The run folder; cells live in ``out_dir/cells``.
    """

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = Path(out_dir)
        self.dir = self.out_dir / "cells"
        self._warned: set[str] = set()  # damaged files already named in a warning
        self._run_lock: FileLock | None = None

    def json_path(self, cell_id: str) -> Path:
        """Where a finished cell's rows live."""
        return self.dir / f"{cell_id}.json"

    def npz_path(self, cell_id: str) -> Path:
        """Where a finished cell's arrays live."""
        return self.dir / f"{cell_id}.npz"

    def done_ids(self, ids: Iterable[str] | None = None, *, warn: bool = False) -> set[str]:
        """Ids of the finished, intact cells among ``ids`` (default: every cell file)."""
        if ids is None:
            if not self.dir.is_dir():
                return set()
            ids = [p.stem for p in self.dir.glob("*.json") if p.name != "identity.json"]
        return {i for i in ids if self.is_done(i, warn=warn)}

    def is_done(self, cell_id: str, *, warn: bool = False) -> bool:
        """Whether the cell's files exist, are intact and of the current
        :data:`~robustbnn.run.cells.OUTPUT_FORMAT`.

        Args:
            cell_id: The cell.
            warn: Log one warning (per file and store) naming a damaged file.
        """
        try:
            self._verified(cell_id)
        except Outdated:
            return False
        except CellMissing as err:
            if warn and str(err) not in self._warned:
                self._warned.add(str(err))
                log.warning("%s; recomputing that cell", err)
            return False
        return True

    def problem(self, cell_id: str) -> str | None:
        """Why a cell does not count as done (its missing or damaged file), or None."""
        try:
            self._verified(cell_id)
        except Outdated:
            path = self.json_path(cell_id)
            return f"{path} is missing" if not path.exists() else f"{path} is outdated"
        except CellMissing as err:
            return str(err)
        return None

    def _verified(self, cell_id: str, *, arrays: bool = False
                  ) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """:func:`~robustbnn.run.cell_file.verify` of the cell's files."""
        return verify(self.json_path(cell_id), self.npz_path(cell_id), cell_id, arrays=arrays)

    def lock(self, cell_id: str) -> FileLock:
        """The cell's file lock: a cell runs in one process at a time, across runs."""
        (self.dir / "locks").mkdir(parents=True, exist_ok=True)
        return FileLock(self.dir / "locks" / f"{cell_id}.lock")

    def write(self, cell: Cell, outcome: CellOutcome) -> None:
        """Store a finished cell: arrays first, then the JSON that marks it done, with the
        sha256 of its content and of its arrays (:func:`~robustbnn.run.cell_file.encode`)."""
        npz, text = encode(cell, outcome)
        if npz is not None:
            write_bytes_atomic(self.npz_path(cell.id), npz)
        write_text_atomic(self.json_path(cell.id), text)

    def read(self, cell_id: str) -> dict[str, Any]:
        """A finished cell's stored JSON (``rows``, ``info``, ``seconds``, ``cell``), verified.

        Raises:
            CellMissing: For a missing, unreadable, damaged or edited cell; names the file.
        """
        try:
            return self._verified(cell_id)[0]
        except Outdated:
            raise CellMissing(f"{self.json_path(cell_id)} is missing (deleted during the "
                              "run?)", cell_id) from None

    def arrays(self, cell_id: str) -> dict[str, np.ndarray]:
        """A finished cell's arrays (empty when it has none), verified against its digest;
        not the examples behind its rows (:meth:`examples`).

        Raises:
            CellMissing: When the cell or its ``.npz`` is missing or damaged; names the file.
        """
        return {k: v for k, v in self._arrays(cell_id).items()
                if not k.startswith(EXAMPLES_PREFIX)}

    def examples(self, cell_id: str) -> dict[str, np.ndarray]:
        """The examples behind a finished cell's rows, ``{"<group key>/<part>": values}``
        (:mod:`robustbnn.results.examples`).

        Raises:
            CellMissing: When the cell or its ``.npz`` is missing or damaged; names the file.
        """
        return {k[len(EXAMPLES_PREFIX):]: v for k, v in self._arrays(cell_id).items()
                if k.startswith(EXAMPLES_PREFIX)}

    def _arrays(self, cell_id: str) -> dict[str, np.ndarray]:
        try:
            return self._verified(cell_id, arrays=True)[1]
        except Outdated:
            raise CellMissing(f"{self.json_path(cell_id)} is missing (deleted during the "
                              "run?)", cell_id) from None

    def run_lock(self) -> FileLock:
        """The folder's run lock (one object per store, so holding it again is re-entrant)."""
        if self._run_lock is None:
            (self.dir / "locks").mkdir(parents=True, exist_ok=True)
            self._run_lock = FileLock(self.dir / "locks" / "run.lock")
        return self._run_lock

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Hold the run lock for a whole run: a second run on the folder waits for it.

        Raises:
            LinkedPathError: When a run part of the folder is a symbolic link.
        """
        RunFolder(self.out_dir).refuse_links()
        lock = self.run_lock()
        try:
            lock.acquire(timeout=0)
        except Timeout:
            log.warning("another robustbnn run is writing to %s; waiting for it to finish "
                        "(or stop this one and pass --out NEW_DIR)", self.out_dir)
            lock.acquire()
        try:
            yield
        finally:
            lock.release()

    def record(self, files: list[str]) -> None:
        """Record derived files (relative to the run folder) as the run's own, before they are
        written; see :mod:`robustbnn.run.ownership`."""
        RunFolder(self.out_dir).record(files)

    def remove_own(self, prefix: str) -> None:
        """Delete the run's own derived files under ``prefix`` (``scores/``) and forget them;
        other files there stay."""
        folder = RunFolder(self.out_dir)
        mine = [f for f in folder.own() if f.startswith(prefix) and f in folder.listed()]
        for rel in mine:
            (self.out_dir / rel).unlink(missing_ok=True)
            parent = (self.out_dir / rel).parent
            while parent != self.out_dir:  # folders the run made, once empty (never others')
                try:
                    parent.rmdir()
                except OSError:
                    break
                parent = parent.parent
        if mine:
            folder.forget(mine)

    def claim(self, identity: dict[str, Any], *, overwrite: bool = False,
              cells: Iterable[str] | None = None) -> None:
        """Make the folder this run configuration's, or refuse if it holds another's.

        A damaged ``cells/identity.json`` (unreadable, not UTF-8, not a JSON object, or gone
        while cells remain) is named as damaged, never taken for another configuration's.
        Cells are content-addressed (their id is a hash of all that decides their result), so
        when every cell file in the folder is one of this run's (``cells``), the folder is this
        run's and the identity is rewritten, with a warning; otherwise the run is refused with
        how to recover.

        Args:
            identity: This run configuration.
            overwrite: Replace a run of another configuration.
            cells: The ids of this run's cells (None: a damaged identity is never rebuilt).

        Raises:
            LinkedPathError: When a run part of the folder is a symbolic link.
            RunFolderConflict: When the folder holds results of another configuration,
                unless ``overwrite``; or files at a run's names that robustbnn did not write;
                or a damaged identity beside cells of another run.
        """
        folder = RunFolder(self.out_dir)
        folder.refuse_links()
        path = self.dir / "identity.json"
        text = canonical_json(identity)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        with self.hold():
            folder.clear_trash()
            try:
                if path.read_text(encoding="utf-8").strip() == text:
                    return
            except (OSError, UnicodeDecodeError):
                pass
            theirs, foreign = folder.holds_run(), folder.foreign()
            damage = _identity_damage(path) if theirs and not overwrite else None
            if damage is not None:
                ids = {PurePosixPath(f).stem for f in folder.cell_files()}
                strangers = ids - set(cells or ())
                if cells is None or strangers:
                    raise RunFolderConflict(
                        f"{path} {damage}, so which run configuration {self.out_dir} holds is "
                        f"unknown, and {len(strangers) or len(ids)} of its {len(ids)} cell(s) "
                        "are not this run's; restore that file (from a backup, or rerun the "
                        "command that made the folder), or pass --out NEW_DIR, or --overwrite "
                        "to replace the folder's results (its cells are then recomputed)")
                log.warning("%s %s; its %d cell(s) all belong to this run, so it was rewritten",
                            path, damage, len(ids))
                theirs = False
            replaced = [f for f in foreign if f in RUN_FILES]
            if replaced:
                raise RunFolderConflict(
                    f"{self.out_dir / replaced[0]} was not written by robustbnn (no "
                    "cells/identity.json records a run there) and this run would replace it; "
                    "move it out of the folder, or pass --out NEW_DIR")
            if foreign and not theirs and not overwrite:
                raise RunFolderConflict(
                    f"{self.out_dir} holds files robustbnn did not write where a run writes its "
                    f"results ({_some(foreign)}); pass --out NEW_DIR, or --overwrite to write "
                    "this run beside them (robustbnn replaces only its own files)")
            if theirs and not overwrite:
                raise RunFolderConflict(
                    f"{self.out_dir} holds the results of another run configuration (another "
                    "suite, seed, model set, setting, dataset or device); pass --out NEW_DIR "
                    "for this run, or --overwrite to replace that run's results")
            trash = None
            if theirs:
                log.warning("--overwrite: moving the earlier run's own files out of %s%s",
                            self.out_dir, f" (kept the files robustbnn did not write: "
                            f"{_some(foreign)})" if foreign else "")
                trash = folder.move_aside()
            elif foreign:
                log.warning("--overwrite: kept the files robustbnn did not write in %s (%s)",
                            self.out_dir, _some(foreign))
            write_text_atomic(path, text + "\n")
            folder.record(list(RUN_FILES))
            if trash is not None:
                shutil.rmtree(trash, ignore_errors=True)


def _identity_damage(path: Path) -> str | None:
    """How a run folder's identity file is damaged (``is missing``, ``is not UTF-8``...), or
    None when it is a readable identity (of this or another configuration)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return "is missing"
    except OSError as err:
        return f"cannot be read ({err.strerror or err})"
    try:
        parsed = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        return "is damaged (not UTF-8 text)"
    except ValueError:
        return "is damaged (truncated or not JSON)" if data.strip() else "is empty"
    if not isinstance(parsed, dict) or not parsed:
        return "is damaged (not a run configuration)"
    return None


def _some(files: list[str], shown: int = 3) -> str:
    """Up to ``shown`` file names, then how many more."""
    more = f" and {len(files) - shown} more" if len(files) > shown else ""
    return ", ".join(files[:shown]) + more
