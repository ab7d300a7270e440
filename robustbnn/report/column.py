"""One leaderboard column, and the two selections every family of columns makes.

:class:`Column` says what a column measures, which aspect table it belongs to
(:data:`ASPECTS`) and how it is shown; :func:`per_run` gives one number per (model, run);
:func:`best_measure` picks, per model, the uncertainty measure with the best run-averaged
value. :mod:`robustbnn.report.columns` lists the columns.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from robustbnn.results.schema import HIGHER_IS_BETTER, group_mean

__all__ = ["ASPECTS", "ATTACKS", "Column", "FIDELITY", "OOD", "ROBUSTNESS", "SANITY", "SHIFT",
           "best_measure", "per_run"]

# The aspects: every column belongs to exactly one, and each aspect is a table of its own
# (robustbnn.report.aspects). Name -> title, in page order.
ATTACKS, ROBUSTNESS, OOD, SHIFT, SANITY = "attacks", "robustness", "ood", "shift", "sanity"
FIDELITY = "fidelity"
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

    def __post_init__(self) -> None:
        """Refuse a column without a known aspect: it would reach no aspect table."""
        if self.aspect not in ASPECTS:
            raise ValueError(f"column {self.key!r}: aspect {self.aspect!r} is not one of "
                             f"{list(ASPECTS)}")

    @property
    def higher_is_better(self) -> bool | None:
        """The sort direction from ``HIGHER_IS_BETTER``; None for text columns."""
        return HIGHER_IS_BETTER[self.metric] if self.kind == "number" else None


def per_run(rows: pd.DataFrame) -> pd.Series:
    """Mean value per (model, run): one number, as each selection holds one row per run (NaN
    when one of them is NaN)."""
    return group_mean(rows, ["model", "run"])


def best_measure(rows: pd.DataFrame, metric: str) -> tuple[pd.Series, pd.Series]:
    """Per model, the measure with the best run-averaged value; its per-run values and name.

    ``rows`` hold one value per (model, run, measure). Ties go to the first measure by name.
    """
    per = rows.groupby(["model", "measure", "run"], sort=True)["value"].mean()
    avg = per.groupby(["model", "measure"], sort=True).mean().reset_index()
    avg = avg.sort_values(["model", "measure"], kind="mergesort")
    ascending = not HIGHER_IS_BETTER[metric]
    avg = avg.sort_values(["model", "value"], ascending=[True, ascending], kind="mergesort")
    best = avg.groupby("model", sort=False).head(1).set_index("model")["measure"]
    chosen = per.reset_index()
    chosen = chosen[chosen["measure"] == chosen["model"].map(best)]
    return chosen.set_index(["model", "run"])["value"], best
