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

__all__ = ["check_out_place", "check_readable", "check_writable", "env_value"]


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
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        where = "is a file" if existing == path else f"is inside the file {existing}"
        raise PathError(f"{flag} {path} {where}, not a folder; choose a folder")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as err:
        raise PathError(f"{flag} {path}: cannot write in {existing} ({err.strerror or err}); "
                        f"choose a writable folder or fix its permissions") from None
    return path


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


def check_out_place(out: str | Path, flag: str, *,
                    others: tuple[tuple[str, Path, str], ...]) -> None:
    """Check that the output folder ``out`` is not a folder where no run belongs: the root of
    the file system, inside one of ``others`` (the model cache, the data root), or inside the
    ``cells/`` of another run (which holds that run's stored cells).

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
