"""Whether a reproduction's Δ is inside the noise: our number's 95% interval, and the words
that place the published value against it (:mod:`robustbnn.reproduce.report`)."""

from __future__ import annotations

import math

import pandas as pd

from robustbnn.report.intervals import Component, interval, seed_interval
from robustbnn.reproduce.experiment import Compare

__all__ = ["delta_text", "in_unit", "inside", "mean_interval", "outside_text"]


def in_unit(c: Compare, value: float) -> float:
    """A fraction in the cell's transform and unit (as the report shows the cell)."""
    if c.transform == "error":
        value = 1.0 - value
    return 100.0 * value if c.unit == "percent" else value


def mean_interval(c: Compare, sample: list[list[Component | None]],
              values: list[float]) -> tuple[float, float]:
    """The 95% interval of the cell's mean in its unit: the bootstrap over test examples and
    seeds where every matched row of every seed has examples, else the t interval of the
    seeds (NaN for one seed)."""
    if sample and all(comp is not None for comps in sample for comp in comps):
        ends = [in_unit(c, v) for v in interval(sample)]  # type: ignore[arg-type]
        return min(ends), max(ends)  # "error" (1 − value) flips the ends
    return seed_interval(values)


def inside(paper: float, lo: float, hi: float) -> str:
    """``yes``/``no``: whether ``paper`` lies within [lo, hi] (up to float rounding)."""
    tol = 1e-9 * max(1.0, abs(paper))
    return "yes" if lo - tol <= paper <= hi + tol else "no"


def delta_text(line: pd.Series) -> str:
    """Δ, and whether the published value lies within our interval (where there is one)."""
    if math.isnan(line["delta"]):
        return "–"
    where = {"yes": " (within our 95% interval)", "no": " (outside)"}
    return f"{line['delta']:+.2f}{where.get(line.get('inside'), '')}"


def outside_text(compared: pd.DataFrame) -> str:
    """How many compared Δs lie outside our interval, of those with one."""
    inside = compared["inside"] if "inside" in compared else pd.Series(dtype=object)
    outside, judged = int((inside == "no").sum()), int(inside.isin(["yes", "no"]).sum())
    if judged == len(compared):
        return f"{outside} of them outside our 95% interval"
    return f"{outside} of the {judged} with an interval outside our 95% interval"
