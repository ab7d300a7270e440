"""A leaderboard column's examples: from its rows to the samples the intervals resample.

The results a report reads carry, per row, the per-example parts behind its value (column
``examples`` of :func:`robustbnn.report.render.load_runs`; None for a row without them). A
column's value per (model, run) comes from some rows (:func:`robustbnn.report.column.per_run`
keeps them); here they become one :data:`~robustbnn.report.intervals.Sample` per model
(:func:`samples`), on all examples or on one half of a fixed split (:func:`halves`): the
columns of a measure chosen out of sample select it on the ``select`` half and report the
``score`` half.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from robustbnn.report.intervals import (
    RANKING_PARTS,
    Component,
    Sample,
    distribution,
    point,
    split_half,
)

__all__ = ["EXAMPLES", "HALVES", "SPLIT_SEED", "ColumnRows", "carried", "component",
           "constant_scores", "halves", "has_examples", "samples", "split_value"]

EXAMPLES = "examples"  # the results column holding a row's parts (or None)
HALVES = ("select", "score")


# The split's seed: one split per test point, the same in every run (the runs score the same
# test points, in the same order). Drawn from each run's seed, 745 of the 1,000
# in-distribution points sat in one seed's selection half and another's scoring half, while
# the measure is chosen on the mean over seeds (issue 48).
SPLIT_SEED = 0


def halves(metric: str, parts: dict[str, np.ndarray], seed: int = SPLIT_SEED
           ) -> dict[str, np.ndarray]:
    """The positions of a row's examples in each half of its fixed split (:data:`HALVES`):
    each stratum (a ranking's two classes; all examples otherwise) is split on its own by
    :func:`~robustbnn.report.intervals.split_half`, so both halves hold both classes; the two
    copies of a test point (adversary detection's clean and adversarial versions) fall in the
    same half. The split depends on the position of a test point alone (and ``seed``, the same
    for every run: :data:`SPLIT_SEED`), not on the run."""
    out: dict[str, list[np.ndarray]] = {h: [] for h in HALVES}
    for key, positions in Component(metric, parts).strata():
        role = key.split(":", 1)[0]
        for half, picked in zip(HALVES, split_half(len(positions), seed, role), strict=True):
            out[half].append(positions[picked])
    return {h: np.sort(np.concatenate(v)) for h, v in out.items()}


def component(row: Any, half: str = "") -> Component | None:
    """The row's :class:`~robustbnn.report.intervals.Component` (on ``half`` of its examples
    when given), or None for a row without usable examples. ``row`` has the result fields and
    ``examples`` (a namedtuple of ``DataFrame.itertuples``)."""
    parts = getattr(row, EXAMPLES, None)
    if not isinstance(parts, dict):
        return None
    whole = Component(row.metric, parts)
    if not whole.supported():
        return None
    if not half:
        return whole
    keep = halves(row.metric, parts)[half]
    part = Component(row.metric, parts, keep=keep, tag=half)
    return part if part.supported() else None


def has_examples(rows: pd.DataFrame) -> bool:
    """Whether every row holds usable examples (and there is a row)."""
    if EXAMPLES not in rows or rows.empty:
        return False
    return all(component(r) is not None for r in rows.itertuples(index=False))


def split_value(row: Any, half: str) -> float:
    """The row's metric on ``half`` of its examples; its own value when it has none."""
    comp = component(row, half)
    return float(row.value) if comp is None else point(comp)


def constant_scores(row: Any) -> bool:
    """Whether a ranking row's uncertainty scores are one value on every example: such a
    measure ranks nothing (its AUROC is 1/2 by ties alone)."""
    parts = getattr(row, EXAMPLES, None)
    prefix = RANKING_PARTS.get(row.metric)
    if not isinstance(parts, dict) or prefix is None or prefix + "score" not in parts:
        return False
    return bool(np.ptp(parts[prefix + "score"]) == 0)


def samples(rows: pd.DataFrame, half: str = "") -> dict[str, Sample]:
    """Per model, its sample of the column made of ``rows``: per run (in run order), the
    components of its rows. A model with a row without examples, or missing from a run that
    another model of the column has, is left out."""
    if EXAMPLES not in rows:
        return {}
    runs = sorted(rows["run"].unique())
    out: dict[str, Sample] = {}
    for model, own in rows.groupby("model", sort=False):
        per_run: list[list[Component]] = []
        for run in runs:
            comps = [component(r, half) for r in own[own["run"] == run].itertuples(index=False)]
            if not comps or any(c is None for c in comps):
                break
            per_run.append(comps)  # type: ignore[arg-type]
        else:
            out[str(model)] = per_run
    return out


class ColumnRows:
    """The rows behind a column's values (:func:`robustbnn.report.column.per_run`), carried in
    the values' ``attrs["column"]``, with the samples and bootstrap distributions computed
    from them once (:mod:`robustbnn.report.ranking` reads a column three times).

    pandas deep-copies ``attrs`` into the result of nearly every operation on a Series; a
    copy of the rows and their examples each time would cost more than the intervals, so a
    copy of this object is the object itself.

    Args:
        rows: The column's rows (with ``examples`` when the run kept them).
        half: ``"score"`` when the values are those of the scoring half of a split.
    """

    def __init__(self, rows: pd.DataFrame, half: str = "") -> None:
        self.rows, self.half = rows, half
        self._samples: dict[str, Sample] | None = None
        self._dists: dict[str, np.ndarray] = {}

    def __copy__(self) -> ColumnRows:
        return self

    def __deepcopy__(self, memo: dict) -> ColumnRows:
        return self

    @property
    def samples(self) -> dict[str, Sample]:
        """Per model, its :data:`~robustbnn.report.intervals.Sample` (:func:`samples`)."""
        if self._samples is None:
            self._samples = samples(self.rows, self.half)
        return self._samples

    def distribution(self, model: str) -> np.ndarray:
        """The model's bootstrap distribution (:func:`robustbnn.report.intervals.distribution`),
        computed once."""
        if model not in self._dists:
            self._dists[model] = distribution(self.samples[model])
        return self._dists[model]


def carried(series: pd.Series) -> ColumnRows | None:
    """The :class:`ColumnRows` a column's values carry, or None."""
    found = series.attrs.get("column")
    return found if isinstance(found, ColumnRows) else None
