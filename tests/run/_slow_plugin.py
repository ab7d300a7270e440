"""A plug-in model whose training never ends on its own (``--plugin tests.run._slow_plugin``).

``$RBNN_SLOW`` picks how its training (not the model contract's 32-example fit) misbehaves:

* ``sleep``: sleeps in Python, 2 minutes;
* ``gil``: sleeps in native code that holds the GIL (``ctypes.PyDLL``), 60 s, as a native
  extension stuck in a long call does (no Python thread of its process can run meanwhile);
* ``grow``: allocates 64 MiB more every step and keeps it (stops itself at 2 GiB);
* ``raise:<name>``: raises the error :data:`ERRORS` names (as a cell's code or its
  environment might).

When it starts, it writes its process id to ``$RBNN_SLOW_MARK/<pid>`` (if set).
"""

import ctypes
import dataclasses
import errno
import os
import time
from pathlib import Path

import torch

from robustbnn.config import TrainConfig
from robustbnn.models import MODELS, ModelSpec
from tests.plugins._linear import ZeroLinear

STEP_MB = 64
CAP_MB = 2048
ERRORS = {
    "TypeError": lambda: TypeError("loss() got an unexpected keyword argument 'objective'"),
    "UnicodeEncodeError": lambda: UnicodeEncodeError("ascii", "\u00e9", 0, 1, "no"),
    "MemoryError": lambda: MemoryError(),
    "ENOSPC": lambda: OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)),
    "ECONNRESET": lambda: ConnectionResetError(errno.ECONNRESET, os.strerror(errno.ECONNRESET)),
}


@dataclasses.dataclass(frozen=True)
class SlowConfig(TrainConfig):
    pass


def misbehave() -> None:
    """What ``$RBNN_SLOW`` asks for, after marking this process as started."""
    mark = os.environ.get("RBNN_SLOW_MARK")
    if mark:
        Path(mark).mkdir(parents=True, exist_ok=True)
        (Path(mark) / str(os.getpid())).touch()
    how = os.environ.get("RBNN_SLOW", "sleep")
    if how.startswith("raise:"):
        raise ERRORS[how.removeprefix("raise:")]()
    if how == "gil":
        ctypes.PyDLL(None).sleep(60)
    elif how == "grow":
        kept = []
        while len(kept) * STEP_MB < CAP_MB:
            kept.append(torch.ones(STEP_MB * 2**20 // 4))  # touched, so resident
            time.sleep(0.02)
        raise RuntimeError(f"grew to {CAP_MB} MiB and was never stopped")
    else:
        time.sleep(120)


class Slow(ZeroLinear):
    """A linear classifier whose real training hangs or grows."""

    def loss(self, x, y, *, n_train, generator=None, batch=(0, 1)):
        if n_train > 100:  # the contract kit's 32-example fit passes
            misbehave()
        return super().loss(x, y, n_train=n_train, generator=generator, batch=batch)


MODELS.register("slow_model", ModelSpec(Slow, SlowConfig, "never finishes training", "test",
                                        stochastic=False, shrink={"smoke": {"epochs": 1}}))
