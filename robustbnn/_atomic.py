"""The atomic write: a unique temporary file beside the target, then ``os.replace``.

The one home of the pattern: results, reports, figures, score files and run cells all write
through :func:`write_bytes_atomic`, and the checkpoint cache (which renames a whole folder into
place) uses :func:`umask_mode` for its temporary folder, so a fix lands once.
"""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path

__all__ = ["OWNER", "umask_mode", "write_bytes_atomic", "write_text_atomic", "writer_alive"]

# In every temporary file's name, so a cleanup can tell a dead writer's leftovers from a live
# writer's file (robustbnn.results.store.remove_stale_temps).
OWNER = f"{socket.gethostname().replace('.', '_')}-{os.getpid()}"


def writer_alive(pid: int) -> bool:
    """Whether the process ``pid`` of this host (a writer named in a temporary name) exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    except (OverflowError, ValueError):  # not a process id at all
        return False
    return True


def umask_mode(path: str | Path) -> None:
    """Give a ``mkstemp``/``mkdtemp`` result the mode ``open``/``mkdir`` would have given it.

    The temporary files behind the atomic writes are created private (0600, 0700); without this
    a results folder or cache entry would be unreadable to the rest of a research group.
    """
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, (0o777 if os.path.isdir(path) else 0o666) & ~mask)


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to a unique temporary file beside ``path``, then rename it into place.

    Concurrent writers of one path never share a temporary file, and a reader sees either the
    old or the new content, never a partial one. The file gets the mode ``open`` would give.
    An ``OSError`` that names no file (a full disk) is raised naming ``path``.

    Args:
        path: The destination; its folder is created if needed.
        data: The complete new content.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{OWNER}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        umask_mode(tmp)
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        if err.filename is not None or err.errno is None:
            raise
        # A failed write names no file (ENOSPC, EDQUOT, EIO): say which one, so the user
        # knows which disk is full.
        raise OSError(err.errno, err.strerror, str(path)) from err
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8, newlines untranslated) atomically; see :func:`write_bytes_atomic`."""
    write_bytes_atomic(path, text.encode("utf-8"))
