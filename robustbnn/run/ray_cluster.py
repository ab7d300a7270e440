"""The lifetime of the Ray processes a run starts, and the signs that a run lost its cluster.

A local Ray (``--executor ray`` without ``--ray-address``) is this run's: the run stops it when
it ends, and a *reaper* stops it when the run dies. ``ray.init`` ties its direct children (GCS,
raylet) to the driver with ``PR_SET_PDEATHSIG``, but the raylet's agents outlive it: after the
driver's SIGKILL they wait up to 60 s on the dead GCS to report the raylet's death (Ray's
``process_watcher``). The reaper is a small process that holds the read end of a pipe whose
write end only the driver holds; end of file means the driver is gone, however it went, and
the reaper then kills every process of the Ray tree it was watching. A cluster the run joined
(``--ray-address``) is never stopped, only left.

Processes are read from ``/proc`` (Linux); elsewhere the reaper watches nothing.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["LOST_CLUSTER", "ClusterWatch", "Reaper", "children", "descendants", "kill_tree",
           "pids_with_arg"]

# What a run that lost its Ray cluster says (one line; the runner's failure lines carry it).
LOST_CLUSTER = ("lost the Ray cluster at {address} ({why}); every finished cell is kept: "
                "start the cluster again and rerun the same command to resume")

_PROC = Path("/proc")


def _stat(pid: int) -> tuple[int, int] | None:
    """``(ppid, start time)`` of a live process, else None."""
    try:
        text = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "
    return int(fields[1]), int(fields[19])


def _processes() -> dict[int, tuple[int, int]]:
    """Every live process: ``{pid: (ppid, start time)}``."""
    table = {}
    for entry in _PROC.glob("[0-9]*"):
        if (stat := _stat(int(entry.name))) is not None:
            table[int(entry.name)] = stat
    return table


def children(pid: int) -> set[int]:
    """The live children of process ``pid``."""
    return {p for p, (ppid, _) in _processes().items() if ppid == pid}


def descendants(roots: Iterable[int]) -> dict[int, int]:
    """``roots`` and all their descendants that live: ``{pid: start time}``."""
    table = _processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: dict[int, int] = {}
    todo = [p for p in roots if p in table]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found[pid] = table[pid][1]
            todo.extend(children.get(pid, ()))
    return found


def kill_tree(pids: dict[int, int]) -> int:
    """SIGKILL each process of ``{pid: start time}`` that is still the same process; how many."""
    killed = 0
    for pid, started in pids.items():
        stat = _stat(pid)
        if stat is None or stat[1] != started or pid == os.getpid():
            continue  # gone, or the pid was reused
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except OSError:
            pass
    return killed


def pids_with_arg(text: str) -> list[int]:
    """The processes whose command line contains ``text`` (a session folder, a port flag)."""
    found = []
    for entry in _PROC.glob("[0-9]*"):
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if text.encode() in cmdline and int(entry.name) not in (os.getpid(), os.getppid()):
            found.append(int(entry.name))
    return found


class Reaper:
    """A watchdog process that kills the Ray processes under ``roots`` once this process dies.

    Args:
        roots: Process ids of the local Ray this run started (its GCS, raylet, monitors).
    """

    def __init__(self, roots: Iterable[int]) -> None:
        self._proc: subprocess.Popen | None = None
        tree = descendants(roots) if _PROC.is_dir() else {}
        if not tree:
            return
        # This file as a script (-I: the standard library only), not `-m robustbnn...`, whose
        # package imports torch: the reaper must be watching within milliseconds. Its own
        # session, so a Ctrl-C to the driver's process group does not stop it first.
        self._proc = subprocess.Popen(  # noqa: S603 - this interpreter, this file
            [sys.executable, "-I", __file__, "reap", *map(str, tree)],
            stdin=subprocess.PIPE, start_new_session=True, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, close_fds=True)

    def close(self) -> None:
        """Let the reaper kill what is left of the tree now and wait for it."""
        if self._proc is None:
            return
        self._proc.stdin.close()  # end of file: the reaper sweeps and exits
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        self._proc = None


class ClusterWatch:
    """A thread that asks the cluster's GCS for its session every ``interval`` seconds and
    calls ``on_lost(why)`` once, when the GCS has not answered for ``patience`` seconds or
    answers with another session (a head that was restarted: a new, empty cluster).

    Without it a driver whose head dies waits on its tasks until Ray ends the process after
    ``gcs_rpc_server_reconnect_timeout_s`` (60 s), with no word about resuming.

    Args:
        probe: Returns the session the GCS names now; raises when it does not answer.
        on_lost: Called (from the watch thread) with why the cluster counts as lost.
        interval: Seconds between probes.
        patience: Seconds without an answer before the cluster counts as lost.
    """

    def __init__(self, probe: Callable[[], object], on_lost: Callable[[str], None], *,
                 interval: float = 2.0, patience: float = 15.0) -> None:
        self._probe, self._on_lost = probe, on_lost
        self._interval, self._patience = interval, patience
        self._session = probe()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="ray-cluster-watch",
                                        daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        answered = time.monotonic()
        while not self._stop.wait(self._interval):
            try:
                session = self._probe()
            except Exception:  # noqa: BLE001 - no answer, whatever the client raises
                if time.monotonic() - answered >= self._patience:
                    self._on_lost(f"its GCS did not answer for {self._patience:.0f} s")
                    return
                continue
            if session != self._session:
                self._on_lost("its head was restarted, which starts a new, empty cluster")
                return
            answered = time.monotonic()

    def close(self) -> None:
        """Stop watching."""
        self._stop.set()
        self._thread.join()


def _reap(roots: list[int]) -> None:
    """The reaper: track the tree under ``roots`` until stdin ends, then kill it."""
    tree = descendants(roots)
    while True:
        ready, _, _ = select.select([sys.stdin], [], [], 0.5)
        if ready and not os.read(sys.stdin.fileno(), 4096):
            break  # end of file: the driver closed the pipe or died
        # The raylet starts workers and agents as it goes; keep every one seen alive.
        tree.update(descendants(tree))
    tree.update(descendants(tree))
    kill_tree(tree)


if __name__ == "__main__":
    # reap PID...: the reaper. kill TEXT: SIGKILL every process whose command line holds TEXT
    # (a Ray temp folder, a node's port flag) and their descendants; `ray stop` would stop
    # every Ray on the machine, other users' included.
    if sys.argv[1:2] == ["reap"]:
        _reap([int(p) for p in sys.argv[2:]])
    elif sys.argv[1:2] == ["kill"] and len(sys.argv) == 3:
        sys.exit(0 if kill_tree(descendants(pids_with_arg(sys.argv[2]))) else 1)
    else:
        sys.exit("usage: ray_cluster.py reap PID... | kill TEXT")
