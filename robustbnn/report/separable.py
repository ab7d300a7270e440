"""Which differences between models exceed the seed spread: groups of overlapping seed ranges.

With several runs (seeds), a model's *seed range* on a column is [min, max] of its per-seed
values. Two models whose seed ranges overlap cannot be told apart at these seeds: another seed
could order them either way. :func:`groups` walks the models in leaderboard order (best
first) and gathers, behind each model not yet placed, every later unplaced model whose range
overlaps its range; the first group holds the models *not separable from the best*. The
leaderboard marks them with :data:`SAME_MARK` in the sort column, and the headline's legend
lists every group (:func:`groups_legend`).

Example:
    >>> ranges = {"a": (0.80, 0.84), "b": (0.83, 0.85), "c": (0.70, 0.72)}
    >>> groups(["b", "a", "c"], ranges)
    (('b', 'a'), ('c',))
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd

__all__ = ["SAME_MARK", "groups", "groups_legend", "overlap", "seed_ranges"]

# The mark of a sort-column cell whose seed range overlaps the best model's.
SAME_MARK = "≈"


def seed_ranges(per_run: pd.Series) -> dict[str, tuple[float, float]]:
    """Per model, (min, max) of its per-run values; a model with a NaN run or no value is left
    out (its range is not known).

    Args:
        per_run: One column's values, indexed by (model, run).
    """
    out = {}
    for model, values in per_run.groupby(level="model", sort=True):
        if len(values) and not values.isna().any():
            out[str(model)] = (float(values.min()), float(values.max()))
    return out


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether the closed ranges ``a`` and ``b`` share a point.

    Example:
        >>> overlap((0.1, 0.2), (0.2, 0.3)), overlap((0.1, 0.2), (0.25, 0.3))
        (True, False)
    """
    return a[0] <= b[1] and b[0] <= a[1]


def groups(order: Sequence[str],
           ranges: Mapping[str, tuple[float, float]]) -> tuple[tuple[str, ...], ...]:
    """Models in ``order`` gathered behind the first unplaced one whose seed range they overlap.

    Args:
        order: The models, best first (the leaderboard's rows).
        ranges: Per model, its seed range (:func:`seed_ranges`); models without one are left
            out.

    Returns:
        The groups, in order; each starts with its leading model. The first group is the best
        model and every model not separable from it.
    """
    todo = [m for m in order if m in ranges and all(math.isfinite(v) for v in ranges[m])]
    out = []
    while todo:
        lead = todo[0]
        group = [m for m in todo if overlap(ranges[lead], ranges[m])]
        out.append(tuple(group))
        todo = [m for m in todo if m not in group]
    return tuple(out)


def groups_legend(found: Sequence[Sequence[str]], *, title: str, seeds: Sequence[int]) -> str:
    """The legend item that says which differences on the sort column exceed the seed spread.

    Args:
        found: The groups (:func:`groups`), best first.
        title: The sort column's title.
        seeds: The seeds of the runs.

    Example:
        >>> groups_legend([("b", "a"), ("c",)], title="clean acc", seeds=[0, 1, 2])[:60]
        '**Seed spread.** On clean acc at seeds 0, 1, 2, ≈ marks a mo'
    """
    shown = "; ".join("{" + ", ".join(f"`{m}`" for m in group) + "}" for group in found)
    return (f"**Seed spread.** On {title} at seeds {', '.join(str(s) for s in seeds)}, "
            f"{SAME_MARK} marks a model whose seed range (min to max over the seeds) overlaps "
            f"the best model's (`{found[0][0]}`): the two are not separable at these seeds. "
            f"Groups, best first, each of the models whose range overlaps its first model's: "
            f"{shown}. A model of a later group is separable from the first model of every "
            "earlier group.")
