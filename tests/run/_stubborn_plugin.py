"""A plug-in model whose training defeats the in-cell alarm
(``--plugin tests.run._stubborn_plugin``).

``$RBNN_STUBBORN`` picks how its training (not the model contract's 32-example fit) keeps
running past ``--cell-timeout`` for ``$RBNN_STUBBORN_S`` seconds in all (default 60; the first
call of its loss stays that long), then returns as if all were well:

* ``swallow``: sleeps in short steps and swallows every ``BaseException`` (the alarm's
  ``CellLimitExceeded`` included) in a loop;
* ``ignore``: sets ``SIGALRM`` to ``SIG_IGN``, then sleeps.

When it starts, it writes its process id to ``$RBNN_SLOW_MARK/<pid>`` (if set).
"""

import dataclasses
import os
import signal
import time
from pathlib import Path

from robustbnn.config import TrainConfig
from robustbnn.models import MODELS, ModelSpec
from tests.plugins._linear import ZeroLinear

RUN_S = float(os.environ.get("RBNN_STUBBORN_S", "60"))
_STAYED: list[bool] = []  # once per process


@dataclasses.dataclass(frozen=True)
class StubbornConfig(TrainConfig):
    pass


def stay() -> None:
    """Run for ``RUN_S`` seconds whatever signal arrives, as ``$RBNN_STUBBORN`` says."""
    if _STAYED:
        return
    _STAYED.append(True)
    mark = os.environ.get("RBNN_SLOW_MARK")
    if mark:
        Path(mark).mkdir(parents=True, exist_ok=True)
        (Path(mark) / str(os.getpid())).touch()
    end = time.monotonic() + RUN_S
    if os.environ.get("RBNN_STUBBORN", "swallow") == "ignore":
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
    while time.monotonic() < end:
        try:
            time.sleep(0.05)
        except BaseException:  # noqa: BLE001, S110 - what a careless plug-in does
            pass


class Stubborn(ZeroLinear):
    """A linear classifier whose real training will not be interrupted."""

    def loss(self, x, y, *, n_train, generator=None, batch=(0, 1)):
        if n_train > 100:  # the contract kit's 32-example fit passes
            stay()
        return super().loss(x, y, n_train=n_train, generator=generator, batch=batch)


MODELS.register("stubborn_model", ModelSpec(Stubborn, StubbornConfig, "ignores the alarm",
                                            "test", stochastic=False,
                                            shrink={"smoke": {"epochs": 1}}))
