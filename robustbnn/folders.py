"""Folder checks at the CLI boundary: output folders writable and where a run may go, data
folders readable, folder variables not set empty.

Run before any work, so a bad ``--out``, ``--cache-dir`` or ``--data-root`` is one line (exit
code 2) instead of a traceback after training.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from robustbnn.errors import PathError

__all__ = ["RUN_MARKERS", "RUN_PARTS", "check_out_place", "check_place", "check_readable",
           "check_writable", "env_value", "write_problem"]


def check_place(path: str | Path, flag: str) -> Path:
    """Check that ``path`` is a folder or can be made one (neither it nor a parent is a file).

    Args:
        path: The folder.
        flag: The option that named it, for the message (``--cache-dir``).

    Returns:
        The nearest existing folder: ``path`` itself, or the parent a write would create it in.

    Raises:
        PathError: When ``path`` (or a parent of it) is a file.
    """
    path = Path(path).expanduser()
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        where = "is a file" if existing == path else f"is inside the file {existing}"
        raise PathError(f"{flag} {path} {where}, not a folder; choose a folder")
    return existing


def check_writable(path: str | Path, flag: str) -> Path:
    """Check that ``path`` is a folder this process can write in, or can create.

    Nothing is created: a temporary file is made and removed in the nearest existing folder.

    Args:
        path: The output folder.
        flag: The option that named it, for the message (``--out``).

    Returns:
        ``path`` with ``~`` expanded.

    Raises:
        PathError: When ``path`` (or a parent of it) is a file, or the folder is not writable.
    """
    path = Path(path).expanduser()
    existing = check_place(path, flag)
    problem = write_problem(existing)
    if problem:
        raise PathError(f"{flag} {path}: cannot write in {existing} ({problem}); "
                        f"choose a writable folder or fix its permissions")
    return path


def write_problem(folder: Path) -> str | None:
    """Why this process cannot create a file in the existing folder ``folder``, or None.

    A temporary file is made and removed: permissions, a read-only mount or an immutable
    folder all refuse it, as they would refuse the real write.
    """
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        return str(err.strerror or err)
    return None


def env_value(name: str) -> str | None:
    """``$name``, or None when it is unset.

    Raises:
        PathError: When it is set but empty (or blank): that would silently mean the
            default, which unsetting it says plainly.
    """
    value = os.environ.get(name)
    if value is not None and not value.strip():
        raise PathError(f"${name} is set but empty; unset it to get the default")
    return value


# A folder holding one of these holds (the results of) a run; these are its own subfolders.
RUN_MARKERS = ("results.jsonl", "run.json", ".robustbnn-owned.json")
RUN_PARTS = ("cells", "scores", "examples", "figures")


def check_out_place(out: str | Path, flag: str, *,
                    others: tuple[tuple[str, Path, str], ...]) -> None:
    """Check that the output folder ``out`` is not a folder where no run belongs: the root of
    the file system, inside one of ``others`` (the model cache, the data root), inside the
    ``cells/`` of another run (which holds that run's stored cells), anywhere inside a run
    folder (one with ``cells/identity.json``: its ``scores/`` or a folder of its own would mix
    another run's files with its, and it would refuse to rerun), or inside the ``scores/``,
    ``examples/`` or ``figures/`` of a folder that holds a run's results. The run folder itself
    is allowed (a rerun, a re-render), and so is a folder beside the results of a run without
    cells (``reports/latest`` beside the committed ``reports/`` run).

    ``bench``, ``reproduce`` and ``report`` check every output folder with this one function
    (:func:`robustbnn.cli.common.check_out`).

    Args:
        out: The output folder.
        flag: The option that named it, for the message (``--out``).
        others: ``(what, folder, origin)`` triples: ``("the model cache", path,
            "--cache-dir")``.

    Raises:
        PathError: Naming ``out``, the folder it is in and where that came from.
    """
    here = Path(out).expanduser().resolve()
    if here == Path(here.anchor):
        raise PathError(f"{flag} {out} is the root of the file system; choose a folder of its "
                        "own, like reports/latest")
    for what, folder, origin in others:
        if here.is_relative_to(Path(folder).expanduser().resolve()):
            raise PathError(f"{flag} {out} is inside {what} {folder} ({origin}); choose a "
                            "folder outside it")
    for part in (here, *here.parents):
        if part.name == "cells" and ((part / "identity.json").exists()
                                     or (part.parent / "run.json").exists()):
            raise PathError(f"{flag} {out} is inside the cells/ folder of the run "
                            f"{part.parent}, whose stored cells it would mix with its own; "
                            "choose a folder outside it")
    for part in here.parents:
        if (part / "cells" / "identity.json").exists():
            raise PathError(f"{flag} {out} is inside the run folder {part} (it holds "
                            "cells/identity.json), whose files it would mix with its own; "
                            "choose a folder outside it")
        child = here.relative_to(part).parts[0]
        if child in RUN_PARTS and any(os.path.lexists(part / m) for m in RUN_MARKERS):
            raise PathError(f"{flag} {out} is inside {part / child}, a folder of the run "
                            f"{part}, whose files it would mix with its own; choose a folder "
                            "outside it")


def check_readable(path: str | Path, flag: str) -> Path:
    """Check that ``path`` is an existing folder this process can list and read.

    Args:
        path: The data folder.
        flag: Where it came from, for the message (``--data-root``, ``$ROBUSTBNN_DATA``).

    Returns:
        ``path`` with ``~`` expanded.

    Raises:
        PathError: When ``path`` does not exist, is not a folder, or cannot be read.
    """
    path = Path(path).expanduser()
    if not path.exists():
        raise PathError(f"{flag} {path} does not exist; give the folder that holds the "
                        "datasets (see `robustbnn datasets`)")
    if not path.is_dir():
        raise PathError(f"{flag} {path} is a file, not a folder; give the folder that holds "
                        "the datasets")
    if not os.access(path, os.R_OK | os.X_OK):
        raise PathError(f"{flag} {path} is not readable; fix its permissions")
    return path
