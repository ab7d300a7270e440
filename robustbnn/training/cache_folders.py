"""The cache's folders under concurrent writers: read one consistently, discard one, sweep.

Other processes (another run, a Ray worker) may replace or discard an entry folder while this
one reads it. A folder is told apart by its identity (inode and ctime), so a reader never
judges an entry by a mix of two entries' files, and a damaged entry is discarded only while it
is still the folder that was judged. A writer's temporary folder names its host and process
(:func:`temp_prefix`), so :func:`remove_dead_temps` removes what killed writers left and never
a live writer's folder. :mod:`robustbnn.training.cache` builds the entries on these.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
import uuid
from pathlib import Path

from robustbnn._atomic import OWNER, writer_alive

__all__ = ["ATTEMPTS", "STALE_SECONDS", "Identity", "discard", "read_consistently",
           "remove_dead_temps", "temp_prefix"]

log = logging.getLogger(__name__)

ATTEMPTS = 5  # how often a reader or writer retries when other processes change the entry

Identity = tuple[int, int]  # (inode, ctime in ns): which folder is at a path now

# A writer's temporary folder: ``.<key>-tmp-<host>-<pid>-<random>`` (see :data:`OWNER`);
# robustbnn before this naming wrote ``.<key>-tmp-<random>``.
_TMP = re.compile(r"^\.[0-9a-f]+-tmp-(?:(?P<host>.+)-(?P<pid>\d+)-)?[A-Za-z0-9_]+$")
_TRASH = re.compile(r"^\.trash-.+-[0-9a-f]{12}$")
STALE_SECONDS = 24 * 3600  # a temporary folder that names no writer is left for a day


def temp_prefix(key: str) -> str:
    """The name prefix of a writer's temporary folder for entry ``key``: it names this host and
    process, so the next run removes it if this process is killed."""
    return f".{key}-tmp-{OWNER.rsplit('-', 1)[0]}-{os.getpid()}-"


def identity(path: Path) -> Identity:
    """Which folder is at ``path`` now (inode and ctime, so a reused inode number differs)."""
    info = os.stat(path)
    return info.st_ino, info.st_ctime_ns


def read_consistently(where: Path, names: tuple[str, ...]
                      ) -> tuple[Identity, list[bytes | OSError]] | None:
    """The folder's identity and the bytes (or read errors) of its files ``names``; None when
    there is no folder.

    A folder swapped by another process between the reads is noticed by its identity and read
    again, so the files returned come from one folder.
    """
    for _ in range(ATTEMPTS):
        try:
            ident = identity(where)
        except FileNotFoundError:
            return None
        files: list[bytes | OSError] = []
        for name in names:
            try:
                files.append((where / name).read_bytes())
            except OSError as err:
                files.append(err)
        try:
            if identity(where) == ident:
                break
        except FileNotFoundError:
            continue
    return ident, files


def discard(where: Path, ident: Identity) -> None:
    """Rename the entry to a unique ``.trash-*`` name, then delete it.

    Does nothing when the entry is gone or another process has put a new one in its place (its
    identity differs from the one judged damaged), so a valid entry is not thrown away.
    """
    trash = where.with_name(f".trash-{where.name}-{uuid.uuid4().hex[:12]}")
    try:
        if identity(where) != ident:
            return
        os.replace(where, trash)
    except FileNotFoundError:
        return
    except OSError as err:
        log.warning("could not discard cache entry %s (%s)", where, err)
        return
    if trash.is_dir():
        shutil.rmtree(trash, ignore_errors=True)
    else:
        trash.unlink(missing_ok=True)


def remove_dead_temps(cache_dir: Path) -> int:
    """Remove the temporary and trash folders that killed writers left in the cache.

    A writer's temporary folder names its host and process id: only those of this host whose
    process no longer exists are removed, so a live writer (another run, a Ray worker on
    another machine) is never disturbed. A folder of the older naming, which names no writer,
    is removed once it is :data:`STALE_SECONDS` old; a ``.trash-*`` folder (a discarded
    entry, already renamed away from every reader) always.

    Args:
        cache_dir: The cache root.

    Returns:
        How many folders were removed.
    """
    host, removed = OWNER.rsplit("-", 1)[0], 0
    try:
        models = [e for e in os.scandir(cache_dir) if e.is_dir(follow_symlinks=False)]
    except OSError:  # no cache yet
        return 0
    now = time.time()
    for model in models:
        try:
            entries = list(os.scandir(model.path))
        except OSError:
            continue
        for entry in entries:
            if not entry.is_dir(follow_symlinks=False):
                continue
            tmp, trash = _TMP.match(entry.name), _TRASH.match(entry.name)
            if tmp and tmp["pid"]:
                dead = tmp["host"] == host and not writer_alive(int(tmp["pid"]))
            elif tmp:
                try:
                    dead = now - entry.stat(follow_symlinks=False).st_mtime > STALE_SECONDS
                except OSError:
                    continue
            else:
                dead = bool(trash)
            if dead:
                shutil.rmtree(entry.path, ignore_errors=True)
                removed += not os.path.lexists(entry.path)
    return removed
