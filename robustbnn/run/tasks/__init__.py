"""One module per task kind; ``TASKS`` maps a cell's task name to its ``run(ctx)`` function."""

from __future__ import annotations

from collections.abc import Callable

from robustbnn.registry import Registry
from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context
from robustbnn.run.tasks import (
    adv_ood,
    attack,
    budget,
    clean,
    detector_aware,
    fgsm,
    heldout,
    indist,
    ood,
    sanity,
    shift,
    targeted,
    train,
)

TASKS: Registry[Callable[[Context], CellOutcome]] = Registry("task")
TASKS.register("train", train.run)
TASKS.register("clean", clean.run)
TASKS.register("fgsm", fgsm.run)
TASKS.register("sanity", sanity.run)
TASKS.register("targeted", targeted.run)
TASKS.register("attack", attack.run)
TASKS.register("indist", indist.run)
TASKS.register("ood", ood.run)
TASKS.register("heldout", heldout.run)
TASKS.register("budget", budget.run)
TASKS.register("detector_aware", detector_aware.run)
TASKS.register("adv_ood", adv_ood.run)
TASKS.register("shift", shift.run)

__all__ = ["TASKS"]
