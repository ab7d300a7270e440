"""Folder checks at the CLI boundary: output folders writable, data folders readable.

Run before any work, so a bad ``--out``, ``--cache-dir`` or ``--data-root`` is one line (exit
code 2) instead of a traceback after training.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from robustbnn.errors import PathError

__all__ = ["check_readable", "check_writable"]


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
