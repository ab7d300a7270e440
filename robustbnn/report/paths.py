"""File names built from data (model, dataset and task names) that stay inside their folder.

Model names come from plug-ins and results files, so ``../../x/pwned`` or ``a/b`` must never
make a report write or read outside its folder. :func:`safe_name` maps a name to one path
component; :func:`child` joins it to a folder and checks the result is inside it.

Example:
    >>> safe_name("mc_dropout")
    'mc_dropout'
    >>> safe_name("a/b")
    'a_b-c14cddc0'
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from robustbnn.errors import UserError

__all__ = ["UnsafeNameError", "child", "safe_name"]

MAX_LENGTH = 120  # leaves room for a prefix, the hash and a suffix within 255 bytes
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


class UnsafeNameError(UserError):
    """A name from the results that cannot become a file name inside its folder."""


def safe_name(name: str) -> str:
    """``name`` as one file-name component of ``[A-Za-z0-9_.-]``.

    Other characters become ``_``; when that changed the name (or it was too long), a short
    hash of the original is appended, so two different names never share a file.

    Raises:
        UnsafeNameError: For a name that maps to nothing, ``.`` or ``..``.
    """
    mapped = _UNSAFE.sub("_", name)
    if mapped != name or len(mapped) > MAX_LENGTH:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        mapped = f"{mapped[:MAX_LENGTH]}-{digest}"
    if mapped in ("", ".", ".."):
        raise UnsafeNameError(f"the name {name!r} cannot name a file; rename it (letters, "
                              "digits, '_', '.', '-')")
    return mapped


def child(folder: Path, filename: str, *, name: str | None = None) -> Path:
    """``folder / filename``, checked to lie directly inside ``folder``.

    Args:
        folder: The folder the file must stay in.
        filename: One path component (built with :func:`safe_name`).
        name: The data name behind ``filename``, for the error message.

    Raises:
        UnsafeNameError: If the path would leave ``folder``.
    """
    base = Path(folder).resolve()
    # Resolve the folder, then join lexically: the file itself may be a stale symlink, which
    # os.replace swaps rather than writes through.
    resolved = Path(os.path.normpath(base / filename))
    if filename in ("", ".", "..") or resolved.parent != base:
        raise UnsafeNameError(f"the name {name or filename!r} would put a file outside {base}; "
                              "rename it")
    return Path(folder) / filename
