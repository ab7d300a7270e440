"""Numerical faults: NaN or inf logits in an evaluation cell become one flagged row.

The contract check at the boundary (:class:`~robustbnn.contract.checked.Checked`,
:func:`~robustbnn.contract.predict.sample_probs`) raises
:class:`~robustbnn.errors.NumericalFaultError` at the first call whose logits are not all finite.
An evaluation cell does not average that NaN into its numbers, and does not fail the run either:
its rows are replaced by one row of task ``numerical_fault``, metric ``nonfinite_logits`` (the
number of non-finite logits of that call), whose setting is the cell's scalar settings and
``in_task``, the cell's task (a task of its own, so no table of the cell's task meets a row
without its knobs). The leaderboard's "numerical faults" column names the model and task, and
every other cell goes on. A cell that reads the arrays of a faulted cell (an OOD set's cell reads
the clean scores) gets the same flag, with the knob ``fault_in`` naming the task it inherited it
from.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

import numpy as np

from robustbnn.errors import NumericalFaultError
from robustbnn.results.names import IN_TASK, NONFINITE_LOGITS, NUMERICAL_FAULT
from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context

__all__ = ["FAULT_ARRAY", "IN_TASK", "NONFINITE_LOGITS", "NUMERICAL_FAULT", "guarded"]

log = logging.getLogger(__name__)

FAULT_ARRAY = "numerical_fault"  # the array a faulted cell stores instead of its scores
FAULT_IN = "fault_in"  # the knob naming the upstream cell a flag was inherited from


def guarded(run: Callable[[Context], CellOutcome]) -> Callable[[Context], CellOutcome]:
    """``run`` with NaN/inf logits turned into a ``numerical_fault`` row (see the module)."""

    @functools.wraps(run)
    def wrapper(ctx: Context) -> CellOutcome:
        upstream = sorted(task for task, arrays in ctx.inputs.items() if FAULT_ARRAY in arrays)
        if upstream:
            count = int(ctx.inputs[upstream[0]][FAULT_ARRAY].sum())
            return _flagged(ctx, count, {FAULT_IN: upstream[0]})
        try:
            return run(ctx)
        except NumericalFaultError as err:
            log.warning("cell %s: %s; its rows are replaced by a %s flag", ctx.cell.label, err,
                        NUMERICAL_FAULT)
            return _flagged(ctx, err.count, {})

    return wrapper


def _flagged(ctx: Context, count: int, extra: dict[str, str]) -> CellOutcome:
    """The one flag row of a faulted cell, and the array that passes the flag downstream."""
    knobs = {IN_TASK: ctx.cell.task}
    knobs |= {k: v for k, v in ctx.params.items()
              if isinstance(v, bool | int | float | str) and k not in ("set", IN_TASK)} | extra
    dataset = ctx.params.get("set")
    row = ctx.result(NUMERICAL_FAULT, knobs, "", NONFINITE_LOGITS, float(count),
                     dataset=dataset if isinstance(dataset, str) else None)
    return CellOutcome(rows=[row], arrays={FAULT_ARRAY: np.array([count], dtype=np.int64)})
