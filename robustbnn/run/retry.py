"""Which cell failures are worth a retry (``--retries``).

A cell is a pure function of its inputs, its random streams included (STYLE.md §10), so an
exception its own code raises (``TypeError``, ``ValueError``, ``UnicodeError``, a
``RuntimeError`` of a plug-in, ``MemoryError``, a ``UserError`` such as a refused contract or
a cell limit) comes back on a retry. Only failures of what the cell runs *on* can pass: a
worker process that died, a lost Ray worker, node or cluster, and the transient OS errors
below. A full disk, a missing file or a denied permission stays until someone acts.
"""

from __future__ import annotations

import concurrent.futures.process
import errno

from robustbnn.run.executors import TaskLost

__all__ = ["TRANSIENT_ERRNOS", "retryable"]

# Interrupted or refused-for-now calls, and connections that dropped.
TRANSIENT_ERRNOS = frozenset({errno.EAGAIN, errno.EINTR, errno.EBUSY, errno.ETIMEDOUT,
                              errno.ECONNRESET, errno.ECONNABORTED, errno.ECONNREFUSED,
                              errno.EPIPE, errno.ENETUNREACH, errno.EHOSTUNREACH,
                              errno.ESTALE})
# Ray's system failures (a task's worker, node or object lost), by class name: Ray is
# imported only with --executor ray.
RAY_SYSTEM_ERRORS = frozenset({"WorkerCrashedError", "NodeDiedError", "ObjectLostError",
                               "OwnerDiedError", "ObjectReconstructionFailedError",
                               "LocalRayletDiedError", "RaySystemError",
                               "ActorDiedError", "RayActorError"})


def retryable(err: BaseException) -> bool:
    """Whether a cell that failed with ``err`` may succeed when run again.

    Example:
        >>> retryable(TypeError("bad argument"))
        False
        >>> retryable(ConnectionResetError(104, "Connection reset by peer"))
        True
    """
    if isinstance(err, (concurrent.futures.process.BrokenProcessPool, TaskLost)):
        return True
    names = {cls.__name__ for cls in type(err).__mro__}
    if names & RAY_SYSTEM_ERRORS:
        return True
    cause = getattr(err, "cause", None)  # a RayTaskError carries the cell's own exception
    if "RayTaskError" in names and isinstance(cause, BaseException):
        return retryable(cause)
    if isinstance(err, OSError):
        return err.errno in TRANSIENT_ERRNOS or (err.errno is None
                                                 and isinstance(err, ConnectionError))
    return False
