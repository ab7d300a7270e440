"""Jobs for a :class:`robustbnn.run.watched.WatchedPool` (importable in its spawned workers)."""

import os
import signal
import time

import numpy as np

from robustbnn.run.limits import CellLimits, guard


def grow_ignoring_the_alarm(limits: CellLimits) -> str:
    """Under ``limits``, ignore SIGALRM and grow by 32 MiB every 20 ms up to 1 GiB, then sleep."""
    kept = []
    with guard(limits):
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        while len(kept) < 32:
            kept.append(np.ones(32 * 2**20 // 8))  # touched, so resident
            time.sleep(0.02)
        time.sleep(30)
    return "never stopped"


def pid(limits: CellLimits) -> int:
    """This worker's process id, under ``limits``."""
    with guard(limits):
        return os.getpid()
