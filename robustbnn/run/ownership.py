"""Ownership of a run folder: robustbnn moves or deletes only the files it knows are its own.

A run folder's own files are

- in ``cells/``: ``identity.json`` and the cell files ``<id>.json`` and ``<id>.npz``
  (20 hex digits);
- the derived files the ownership record ``.robustbnn-owned.json`` lists: ``results.csv``,
  ``results.jsonl``, ``run.json`` and every ``scores/`` and ``examples/`` file a run wrote,
  each recorded *before* it is written; a folder of an older robustbnn (an identity but no
  record) owns those three and ``scores/*/*.npz``; and the record itself;
- the reports the render manifest lists (:mod:`robustbnn.results.manifest`), and the manifest.

Anything else (a user's ``scores/exam2025/grades.csv``, ``notes.md``, the model cache in
``cells/models``, the lock files) is never moved or deleted, and nothing is done through a
symbolic link: a linked run part is refused by name (:func:`robustbnn.results.paths.refuse_links`).

``--overwrite`` moves the old run's own files aside (:meth:`RunFolder.move_aside`): each is
renamed, which is atomic and never follows a link, into a fresh
``<out>/.robustbnn-trash-<uuid>/``, in the order derived files, reports, cells, the record,
``identity.json``; only then does the caller write the new identity and delete the trash
folder. An interrupted overwrite therefore leaves the old identity in place (the next run is
refused, or with ``--overwrite`` finishes the move), never a new identity beside an old
leaderboard, and a trash folder it leaves holds only robustbnn's own files: the next claim
deletes it (:meth:`RunFolder.clear_trash`). Trash-then-delete rather than a kept
``.previous/`` folder: the old run's cells can be recomputed, and kept copies would grow with
every overwrite.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import uuid
from pathlib import Path, PurePosixPath

from robustbnn._atomic import write_text_atomic
from robustbnn.results.manifest import MANIFEST, read_manifest
from robustbnn.results.paths import link_error, linked_part, refuse_links

__all__ = ["IDENTITY", "OWNED", "RUN_FILES", "RunFolder"]

log = logging.getLogger(__name__)

IDENTITY, OWNED = "cells/identity.json", ".robustbnn-owned.json"
RUN_FILES = ("results.csv", "results.jsonl", "run.json")  # a run's own top-level files
# Every path a bench writes into or through: none may be a symbolic link.
PARTS = ("cells", "cells/locks", IDENTITY, OWNED, *RUN_FILES, "scores", "examples", "figures",
         MANIFEST)
_CELL = re.compile(r"^[0-9a-f]{20}\.(json|npz)$")
_TRASH = ".robustbnn-trash-"
_TRASH_NAME = re.compile(r"^\.robustbnn-trash-[0-9a-f]{32}$")


def _derived(entry: object) -> bool:
    """Whether an entry of the record names a file a run writes: a top-level run file or a
    ``scores/<model>/<set>.npz`` or an ``examples/<model>.npz`` (never ``..``, never
    absolute)."""
    if not isinstance(entry, str) or "\\" in entry:
        return False
    if entry in RUN_FILES:
        return True
    parts = PurePosixPath(entry).parts
    if {".", ".."} & set(parts) or not entry.endswith(".npz"):
        return False
    return (len(parts) == 3 and parts[0] == "scores") or (len(parts) == 2
                                                          and parts[0] == "examples")


class RunFolder:
    """The files of one run folder, sorted into robustbnn's own and the others.

    Args:
        out: The run folder.
    """

    def __init__(self, out: Path) -> None:
        self.out = Path(out)

    def refuse_links(self) -> None:
        """Refuse a folder in which a run part is a symbolic link.

        Raises:
            LinkedPathError: Naming the link.
        """
        refuse_links(self.out, PARTS)

    def has_identity(self) -> bool:
        """Whether ``cells/identity.json`` exists (of any run)."""
        return os.path.lexists(self.out / IDENTITY)

    def listed(self) -> set[str]:
        """The derived files recorded as this folder's own (existing or not)."""
        path = self.out / OWNED
        try:
            files = json.loads(path.read_text(encoding="utf-8"))["files"]
        except FileNotFoundError:
            return self._legacy()
        except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as err:
            log.warning("%s is unreadable (%s); only results.csv, results.jsonl and run.json "
                        "count as the run's own", path, err)
            return set(RUN_FILES) if self.has_identity() else set()
        own = {f for f in files if _derived(f)} if isinstance(files, list) else set()
        return own | (set(RUN_FILES) if self.has_identity() else set())

    def _legacy(self) -> set[str]:
        """What a run of an older robustbnn (no record) wrote: its run files and
        ``scores/*/*.npz``."""
        if not self.has_identity():
            return set()
        own = set(RUN_FILES)
        scores = self.out / "scores"
        if scores.is_dir() and not scores.is_symlink():
            for sub in os.scandir(scores):
                if sub.is_dir(follow_symlinks=False):
                    own |= {f"scores/{sub.name}/{f.name}" for f in os.scandir(sub.path)
                            if f.name.endswith(".npz") and f.is_file(follow_symlinks=False)}
        return own

    def record(self, files: list[str]) -> None:
        """Record derived files as the run's own before they are written (a crash between the
        two leaves a listed file that does not exist, never an own file that is unlisted)."""
        listed = self.listed()
        new = listed | set(files)
        if new != listed or not os.path.lexists(self.out / OWNED):
            self._write(new)

    def forget(self, files: list[str]) -> None:
        """Drop files from the record (after they were removed)."""
        self._write(self.listed() - set(files))

    def _write(self, files: set[str]) -> None:
        write_text_atomic(self.out / OWNED, json.dumps(
            {"about": "files robustbnn wrote in this run folder; --overwrite moves only these "
                      "(and cells/, and the reports of .robustbnn-render.json) aside",
             "files": sorted(files)}, indent=1) + "\n")

    def cell_files(self) -> list[str]:
        """The cell files in ``cells/`` (``<id>.json``, ``<id>.npz``)."""
        cells = self.out / "cells"
        if not cells.is_dir() or cells.is_symlink():
            return []
        return sorted(f"cells/{e.name}" for e in os.scandir(cells)
                      if _CELL.match(e.name) and not e.is_dir(follow_symlinks=False))

    def own(self) -> list[str]:
        """robustbnn's files present in the folder, in the order :meth:`move_aside` moves
        them (derived files, reports, cells, the record, ``identity.json`` last).

        Raises:
            LinkedPathError: When a folder on the way to one of them is a symbolic link.
        """
        reports = [*read_manifest(self.out, quiet=True), MANIFEST]
        found = [*sorted(self.listed()), *reports, *self.cell_files(), OWNED, IDENTITY]
        own = [f for f in dict.fromkeys(found) if os.path.lexists(self.out / f)]
        for rel in own:
            parent = PurePosixPath(rel).parent
            link = linked_part(self.out, str(parent)) if parent.parts else None
            if link is not None:
                raise link_error(link)
        return own

    def holds_run(self) -> bool:
        """Whether the folder holds (part of) a run: an identity, cells or recorded files.
        Reports alone (a ``robustbnn report --out`` folder) are no run."""
        return self.has_identity() or bool(self.cell_files()) or any(
            os.path.lexists(self.out / f) for f in self.listed())

    def foreign(self) -> list[str]:
        """Files where a run writes (``results.*``, ``run.json``, ``scores/``) that robustbnn
        did not record as its own; links are listed, never followed."""
        own = set(self.listed())
        found = [f for f in RUN_FILES if os.path.lexists(self.out / f)]
        scores = self.out / "scores"
        if scores.is_dir() and not scores.is_symlink():
            for root, dirs, files in os.walk(scores):  # does not descend into linked folders
                rel = Path(root).relative_to(self.out).as_posix()
                found += [f"{rel}/{name}" for name in sorted(files)]
                found += [f"{rel}/{name}" for name in sorted(dirs)
                          if os.path.islink(os.path.join(root, name))]
                dirs.sort()
        return [f for f in found if f not in own]

    def move_aside(self) -> Path:
        """Rename every own file into a new trash folder; return it (the caller deletes it
        once the new identity is written). Folders this emptied under ``scores/`` and
        ``figures/`` are removed; folders that still hold other files stay."""
        trash = self.out / f"{_TRASH}{uuid.uuid4().hex}"
        trash.mkdir()
        emptied: set[Path] = set()
        for rel in self.own():
            dest = trash / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.rename(self.out / rel, dest)
            parent = (self.out / rel).parent
            while parent != self.out and parent.name != "cells":
                emptied.add(parent)
                parent = parent.parent
        for folder in sorted(emptied, key=lambda p: len(p.parts), reverse=True):
            try:
                folder.rmdir()  # only when empty: another file keeps it
            except OSError:
                pass
        return trash

    def clear_trash(self) -> None:
        """Delete trash folders an interrupted overwrite left (they hold only own files)."""
        if not self.out.is_dir():
            return
        for entry in os.scandir(self.out):
            if _TRASH_NAME.match(entry.name) and entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
