"""What a run needs of its model cache: a read-only cache serves a run whose every trained
model it holds, and a run that must train and save one there is refused before it starts.

Nothing is written to a read-only cache: a model found there is loaded without the entry's
lock (:func:`robustbnn.training.fit_or_load.fit_or_load`), since no writer can come.
"""

from __future__ import annotations

from pathlib import Path

from robustbnn.run.cells import CellKind
from robustbnn.run.plan import Plan
from robustbnn.training import cache

__all__ = ["check_cache", "missing_models"]


def missing_models(plan: Plan) -> list[str]:
    """The training cells of ``plan`` whose model the cache does not hold, as ``mlp`` or
    ``mlp without class 3``."""
    where = Path(plan.spec.cache_dir)
    return list(dict.fromkeys(
        c.label.removeprefix("train ") for c in plan.cells
        if c.task == CellKind.TRAIN and not cache.holds(where, c.model, c.params["cache_key"])))


def check_cache(plan: Plan) -> None:
    """Refuse a run that must save a model in a cache where nothing can be written.

    Raises:
        PathError: Naming the cache, why it is read-only, the models it lacks and the way out
            (make it writable, another ``--cache-dir``, or ``--no-cache``).
    """
    where = Path(plan.spec.cache_dir)
    problem = cache.read_only(where)
    if problem is None:
        return
    missing = missing_models(plan)
    if missing:
        raise cache.read_only_error(where, problem, missing)
