"""One module per task kind; ``TASKS`` maps a cell's kind (:class:`~robustbnn.run.cells.CellKind`)
to its ``run(ctx)`` function."""

from __future__ import annotations

from collections.abc import Callable

from robustbnn.registry import Registry
from robustbnn.run.cells import CellKind as K
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
    fidelity,
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
TASKS.register(K.TRAIN, train.run)
# The model contract, before a model's first cell: a broken clause fails it (not guarded).
TASKS.register(K.CONTRACT, contract.run)
TASKS.register(K.CLEAN, guarded(clean.run))
TASKS.register(K.FGSM, guarded(fgsm.run))
TASKS.register(K.SANITY, guarded(sanity.run))
TASKS.register(K.TARGETED, guarded(targeted.run))
TASKS.register(K.ATTACK, guarded(attack.run))
TASKS.register(K.INDIST, guarded(indist.run))
TASKS.register(K.OOD, guarded(ood.run))
TASKS.register(K.MEASURE, guarded(measure.run))
TASKS.register(K.HELDOUT, guarded(heldout.run))
TASKS.register(K.BUDGET, guarded(budget.run))
TASKS.register(K.DETECTOR_AWARE, guarded(detector_aware.run))
TASKS.register(K.ADV_OOD, guarded(adv_ood.run))
TASKS.register(K.SHIFT, guarded(shift.run))
TASKS.register(K.FIDELITY, guarded(fidelity.run))

__all__ = ["TASKS"]
