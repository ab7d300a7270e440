"""Numerical faults in the reports: a number made of a faulted cell is never shown as a number.

A cell whose model returned NaN or inf logits stores one ``numerical_fault`` row in place of
its rows (:mod:`robustbnn.run.tasks._faults`): knob ``in_task`` names the cell's task, its
other scalar knobs are the cell's settings, and its dataset is the OOD set for an OOD cell.
A leaderboard column that averages cells (mean OOD AUROC over the sets, a measure over
several sets, a mean over corruptions) would otherwise show the mean of the cells that
remain. Here a column's number of a model is *partial* when one of the model's faults, in
any run, falls on the column: the fault's cell writes rows of one of the column's tasks
(:data:`ROW_TASKS`), and the knobs that tell a task's columns apart (:data:`KEYS`: ε,
S_attack, the shift) agree with some row of the column. Such a model leaves the column's
values and intervals in every run, and every report shows :data:`PARTIAL` in its place
(:func:`robustbnn.report.leaderboard.format_cell`), with the faulted cells named in the legend
and in ``leaderboard.json``.

Example:
    >>> fault_where("ood", {"in_task": "ood"}, "uniform")
    'ood on uniform'
    >>> fault_where("attack", {"attack": "pgd", "eps": 0.1, "S_attack": 4}, "mnist5k")
    'pgd ε=0.1 S=4'
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from robustbnn.report.column_samples import ColumnRows, carried
from robustbnn.report.markdown import with_run
from robustbnn.results import names as n

__all__ = ["FAULTS", "IN_TASK", "KEYS", "NUMERICAL_FAULT", "PARTIAL", "ROW_TASKS", "Fault",
           "fault_where", "find_faults", "ood_faults", "without_faults"]

NUMERICAL_FAULT = n.NUMERICAL_FAULT  # the task of a faulted cell's row
IN_TASK = n.IN_TASK  # its knob naming the cell's task
PARTIAL = "partial"  # what a report shows in place of a number made of a faulted cell
FAULTS = "faults"  # the attrs key of a column's values: model -> the faulted cells, in words
# The result tasks a cell kind writes, where they are not the kind's own name; an ``attack``
# cell writes rows of its attack's name (its knob ``attack``).
ROW_TASKS = {"clean": (n.CLEAN, n.RELIABILITY, n.COST), "sanity": (n.FGSM_SANITY,),
             "measure": (n.OOD,), "heldout": (n.HELDOUT_CLEAN,),
             "budget": (n.PGD_BUDGET, n.WORST_OF_K, n.ROBUST_FLAGS)}
# The knobs that tell one task's columns apart; a fault falls on a column when those it shares
# with one of the column's rows agree (a fault of FGSM at S_attack = 1 is not one at 32).
KEYS = (n.EPS, n.S_ATTACK, n.SHIFT)
SET_TASKS = ("ood", "adv_ood", "measure")  # cell kinds with one cell per OOD set


@dataclasses.dataclass(frozen=True)
class Fault:
    """One faulted cell of one run.

    Attributes:
        model: The model.
        run: The run (the results' ``run`` column).
        tasks: The result tasks the cell would have written.
        knobs: Its settings among :data:`KEYS`.
        where: The cell in words (:func:`fault_where`).
        dataset: The OOD set of an OOD cell, else the run's dataset.
    """

    model: str
    run: int
    tasks: tuple[str, ...]
    knobs: dict[str, object]
    where: str
    dataset: str


def fault_where(task: str, knobs: dict, dataset: str) -> str:
    """A faulted cell in words: ``ood on uniform``, ``pgd ε=0.1 S=4``, ``fgsm S=1``."""
    if task in SET_TASKS:
        return f"{task} on {dataset}"
    name = str(knobs.get("attack", task)) if task == "attack" else task
    parts = [f"ε={knobs[n.EPS]:g}"] if isinstance(knobs.get(n.EPS), int | float) else []
    parts += [f"S={knobs[n.S_ATTACK]}"] if n.S_ATTACK in knobs else []
    parts += [str(knobs[n.SHIFT])] if n.SHIFT in knobs else []
    return " ".join([name, *parts])


def find_faults(results: pd.DataFrame) -> list[Fault]:
    """The faulted cells of ``results`` (with a ``run`` column), in row order."""
    rows = results[results["task"] == NUMERICAL_FAULT]
    out = []
    for model, run, knobs, dataset in zip(rows["model"], rows["run"], rows["setting"],
                                          rows["dataset"], strict=True):
        task = str(knobs.get(IN_TASK, ""))
        tasks = ((str(knobs.get("attack", task)),) if task == "attack"
                 else ROW_TASKS.get(task, (task,)))
        out.append(Fault(str(model), int(run), tasks,
                         {k: knobs[k] for k in KEYS if k in knobs},
                         fault_where(task, knobs, str(dataset)), str(dataset)))
    return out


def ood_faults(results: pd.DataFrame) -> set[tuple[str, str]]:
    """The (model, OOD set) pairs whose OOD cell had a numerical fault, in some run."""
    return {(f.model, f.dataset) for f in find_faults(with_run(results)) if n.OOD in f.tasks}


def _falls_on(fault: Fault, rows: pd.DataFrame) -> bool:
    """Whether ``fault`` falls on the column made of ``rows`` (see the module)."""
    for task, knobs in zip(rows["task"], rows["setting"], strict=True):
        if task in fault.tasks and all(knobs[k] == v for k, v in fault.knobs.items()
                                       if k in knobs):
            return True
    return False


def without_faults(series: pd.Series, faults: list[Fault], runs: pd.Series) -> pd.Series:
    """A column's values (by (model, run), its rows carried: :func:`~robustbnn.report.column.
    per_run`) without the models a fault falls on, in every run, and with ``attrs[FAULTS]``:
    model -> its faulted cells in words (``ood on glyphs, ood on uniform``; ``in 1/2 runs``
    where not every run of the model faulted). ``series`` itself when none falls on it.

    Args:
        series: The column's values.
        faults: The faulted cells of the results (:func:`find_faults`).
        runs: The number of runs per model.
    """
    column = carried(series)
    if column is None or not faults:
        return series
    hits: dict[str, dict[str, set[int]]] = {}
    for fault in faults:
        if _falls_on(fault, column.rows):
            hits.setdefault(fault.model, {}).setdefault(fault.where, set()).add(fault.run)
    if not hits:
        return series
    words = {m: ", ".join(w if len(r) == runs.get(m, len(r)) else f"{w} in {len(r)}/{runs[m]} "
                          "runs" for w, r in sorted(cells.items()))
             for m, cells in hits.items()}
    kept = ~series.index.get_level_values("model").isin(list(hits))
    rows = column.rows[~column.rows["model"].isin(list(hits))]
    out = series[kept]
    out.attrs = {**series.attrs, "column": ColumnRows(rows, column.half), FAULTS: words}
    return out
