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
    contract,
    detector_aware,
    fgsm,
    heldout,
    indist,
    measure,
    ood,
    sanity,
    shift,
    targeted,
    train,
)
from robustbnn.run.tasks._faults import guarded

TASKS: Registry[Callable[[Context], CellOutcome]] = Registry("task")
# Evaluation tasks run guarded: NaN/inf logits become a numerical_fault row (tasks._faults).
TASKS.register("train", train.run)
# The model contract, before a model's first cell: a broken clause fails it (not guarded).
TASKS.register("contract", contract.run)
TASKS.register("clean", guarded(clean.run))
TASKS.register("fgsm", guarded(fgsm.run))
TASKS.register("sanity", guarded(sanity.run))
TASKS.register("targeted", guarded(targeted.run))
TASKS.register("attack", guarded(attack.run))
TASKS.register("indist", guarded(indist.run))
TASKS.register("ood", guarded(ood.run))
TASKS.register("measure", guarded(measure.run))
TASKS.register("heldout", guarded(heldout.run))
TASKS.register("budget", guarded(budget.run))
TASKS.register("detector_aware", guarded(detector_aware.run))
TASKS.register("adv_ood", guarded(adv_ood.run))
TASKS.register("shift", guarded(shift.run))

__all__ = ["TASKS"]
