"""A bench run as a plan of cells: build the plan, run its cells on an executor, keep each one.

* :mod:`~robustbnn.run.cells`: a cell (one training or one evaluation task) and its identity;
* :mod:`~robustbnn.run.plan`: a suite's config -> the ordered cells and their dependencies;
* :mod:`~robustbnn.run.context`: what a cell runs with (data, model, random streams);
* :mod:`~robustbnn.run.tasks`: one module per task kind, each ``cell -> rows``;
* :mod:`~robustbnn.run.store`: one file per finished cell; results assembled from them;
* :mod:`~robustbnn.run.executors`: local, process pool and Ray, behind one small interface;
* :mod:`~robustbnn.run.runner`: the scheduler (dependencies, retries, locks, progress).
"""

from __future__ import annotations

from robustbnn.run.cells import Cell, CellOutcome
from robustbnn.run.plan import Plan, build_plan

__all__ = ["Cell", "CellOutcome", "Plan", "build_plan"]
