"""File names built from data (model, dataset and task names) that stay inside their folder.

Model names come from plug-ins and results files, so ``../../x/pwned`` or ``a/b`` must never
make a report write or read outside its folder. :func:`safe_name` maps a name to one path
component; :func:`child` joins it to a folder and checks the result is inside it.

A folder robustbnn writes into (``figures/``, ``scores/``, ``cells/``) must be a real folder,
not a symbolic link: a received run folder whose ``figures`` points elsewhere would otherwise
make a render write and delete there. :func:`refuse_links` checks that before any work, and
:func:`child` checks it again for every file.

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

from robustbnn.errors import PathError, UserError

__all__ = ["LinkedPathError", "UnsafeNameError", "child", "link_error", "linked_part",
           "refuse_links", "safe_name"]

MAX_LENGTH = 120  # leaves room for a prefix, the hash and a suffix within 255 bytes
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


class UnsafeNameError(UserError):
    """A name from the results that cannot become a file name inside its folder."""


class LinkedPathError(PathError):
    """A part of a run folder that is a symbolic link, which robustbnn never writes through."""


def linked_part(folder: Path, relative: str) -> Path | None:
    """The first of ``folder/relative`` and its folders below ``folder`` that is a symbolic
    link (checked with ``lstat``, never followed), or None."""
    path = Path(folder)
    for part in Path(relative).parts:
        path = path / part
        if path.is_symlink():
            return path
    return None


def refuse_links(folder: Path, parts: tuple[str, ...] | list[str], *, flag: str = "--out"
                 ) -> None:
    """Refuse a run folder in which one of ``parts`` (relative paths) or a folder on the way to
    it is a symbolic link.

    Raises:
        LinkedPathError: Naming the link and its target.
    """
    for relative in parts:
        link = linked_part(folder, relative)
        if link is not None:
            raise link_error(link, flag)


def link_error(link: Path, flag: str = "--out") -> LinkedPathError:
    """The one-line refusal of a symbolically linked run part."""
    try:
        target = os.readlink(link)
    except OSError:
        target = "?"
    return LinkedPathError(f"{link} is a symbolic link (to {target}); robustbnn never writes or "
                           "deletes through a link inside a run folder: replace the link with a "
                           f"real folder or file, or choose another {flag}")


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
        LinkedPathError: If ``folder`` is a symbolic link (its target would count as inside).
    """
    if Path(folder).is_symlink():
        raise link_error(Path(folder))
    base = Path(folder).resolve()
    # Resolve the folder, then join lexically: the file itself may be a stale symlink, which
    # os.replace swaps rather than writes through.
    resolved = Path(os.path.normpath(base / filename))
    if filename in ("", ".", "..") or resolved.parent != base:
        raise UnsafeNameError(f"the name {name or filename!r} would put a file outside {base}; "
                              "rename it")
    return Path(folder) / filename
