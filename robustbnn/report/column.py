"""One leaderboard column, and the two selections every family of columns makes.

:class:`Column` says what a column measures, which aspect table it belongs to
(:data:`ASPECTS`) and how it is shown; :func:`per_run` gives one number per (model, run);
:func:`best_measure` picks, per model, the uncertainty measure with the best run-averaged
value. :mod:`robustbnn.report.columns` lists the columns.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from robustbnn.report.column_samples import (
    ColumnRows,
    constant_scores,
    has_examples,
    split_value,
)
from robustbnn.results.schema import HIGHER_IS_BETTER, group_mean

__all__ = ["ASPECTS", "ATTACKS", "Column", "FIDELITY", "OOD", "OUT_OF_SAMPLE", "ROBUSTNESS",
           "SANITY", "SHIFT", "best_measure", "per_run"]

# The aspects: every column belongs to exactly one, and each aspect is a table of its own
# (robustbnn.report.aspects). Name -> title, in page order.
ATTACKS, ROBUSTNESS, OOD, SHIFT, SANITY = "attacks", "robustness", "ood", "shift", "sanity"
FIDELITY = "fidelity"
OUT_OF_SAMPLE = "out_of_sample"  # Column.chosen of a measure chosen on a selection half
ASPECTS = {ATTACKS: "Attacks", ROBUSTNESS: "Robustness", OOD: "OOD detection",
           SHIFT: "Calibration and dataset shift", FIDELITY: "Posterior fidelity",
           SANITY: "Sanity checks and cost"}


@dataclasses.dataclass(frozen=True)
class Column:
    """One leaderboard column.

    Attributes:
        key: Stable identifier: the CSV/JSON field and the value of ``--sort``.
        title: Header in Markdown and HTML.
        metric: The metric it reports (a ``HIGHER_IS_BETTER`` key); "" for text columns.
        kind: ``"number"`` or ``"text"``.
        fmt: Format spec of a number in Markdown/HTML (``"d"``: an integer with separators).
        timing: Machine-dependent (wall-clock); excluded from the CI regression check.
        aspect: The aspect table it belongs to, a key of :data:`ASPECTS`.
        measure_key: Key of the text column naming the measure behind this number; a table
            that shows this column but not that one shows the name in the cell,
            ``0.9632 (bald)`` (the headline, :mod:`robustbnn.report.headline`). "" for none.
        bound_key: Key of the text column saying whether this number is an upper bound; a
            table that shows this column but not that one marks such a cell with
            :data:`robustbnn.report.leaderboard.UPPER_BOUND_MARK`. "" for none.
        chosen: :data:`OUT_OF_SAMPLE` when the measure behind the number was chosen on a
            selection half of the examples and the number is the scoring half's
            (:func:`best_measure`); "" otherwise. Two numbers of a column that differ here
            are numbers of two definitions, which the regression checks do not compare.
    """

    key: str
    title: str
    metric: str = ""
    kind: str = "number"
    fmt: str = ".4f"
    timing: bool = False
    aspect: str = ""
    measure_key: str = ""
    bound_key: str = ""
    chosen: str = ""

    def __post_init__(self) -> None:
        """Refuse a column without a known aspect: it would reach no aspect table."""
        if self.aspect not in ASPECTS:
            raise ValueError(f"column {self.key!r}: aspect {self.aspect!r} is not one of "
                             f"{list(ASPECTS)}")

    @property
    def higher_is_better(self) -> bool | None:
        """The sort direction from ``HIGHER_IS_BETTER``; None for text columns."""
        return HIGHER_IS_BETTER[self.metric] if self.kind == "number" else None


def per_run(rows: pd.DataFrame, *, half: str = "") -> pd.Series:
    """Mean value per (model, run): one number, as each selection holds one row per run (NaN
    when one of them is NaN). The rows come along in the Series' ``attrs["column"]``
    (:class:`~robustbnn.report.column_samples.ColumnRows`), for the intervals.

    Args:
        rows: The column's rows.
        half: ``"score"``: each value on the scoring half of its examples
            (:func:`~robustbnn.report.column_samples.split_value`), as the columns of a
            measure chosen out of sample are; a row without examples keeps its value.
    """
    if half and len(rows):
        rows = rows.assign(value=[split_value(r, half) for r in rows.itertuples(index=False)])
    out = group_mean(rows, ["model", "run"])
    out.attrs = {"column": ColumnRows(rows, half)}
    return out


def best_measure(rows: pd.DataFrame, metric: str) -> tuple[pd.Series, pd.Series]:
    """Per model, the best uncertainty measure; its per-run values and its name.

    ``rows`` hold one or more values per (model, run, measure) (the OOD sets of a measure:
    their mean). Where every row of a model has its examples, the measure is chosen out of
    sample: on the selection half of the examples (:func:`~robustbnn.report.intervals.
    split_half`), averaged over runs, and the values returned are those of the scoring half;
    a measure constant on every example of the model (BALD of a deterministic model: its
    AUROC is 1/2 by ties alone) is never chosen. Otherwise (a run of an older robustbnn) the
    choice is made on the values themselves. Ties go to the first measure by name. The
    returned values carry the chosen rows in ``attrs`` (:func:`per_run`).
    """
    sampled = has_examples(rows)
    ranked = rows
    if sampled:
        informative = [not constant_scores(r) for r in rows.itertuples(index=False)]
        ranked = rows[informative]
        if ranked.empty:
            ranked = rows
        ranked = ranked.assign(value=[split_value(r, "select")
                                      for r in ranked.itertuples(index=False)])
    per = ranked.groupby(["model", "measure", "run"], sort=True)["value"].mean()
    avg = per.groupby(["model", "measure"], sort=True).mean().reset_index()
    avg = avg.sort_values(["model", "measure"], kind="mergesort")
    ascending = not HIGHER_IS_BETTER[metric]
    avg = avg.sort_values(["model", "value"], ascending=[True, ascending], kind="mergesort",
                          na_position="last")
    best = avg.groupby("model", sort=False).head(1).set_index("model")["measure"]
    chosen = rows[rows["measure"] == rows["model"].map(best)]
    return per_run(chosen, half="score" if sampled else ""), best
