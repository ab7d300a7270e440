"""Dataset-shift detail tables (``shift.md``): every angle and every corruption, as numbers.

* Rotated MNIST (Ovadia et al. 2019, Fig. 1): accuracy, ECE, NLL and Brier score per angle,
  rows = model, columns = angle (0° is the clean test set); the mean of every uncertainty
  measure per angle, rows = model x measure.
* MNIST-C (Mu & Gilmer 2019): the same per corruption, in the reference's order, with the
  mean over corruptions as the last column.

Mean ± sample std over runs when several.
"""

from __future__ import annotations

import pandas as pd

from robustbnn.report.markdown import grid_table, with_run
from robustbnn.results import names as n
from robustbnn.results.schema import with_knobs

__all__ = ["shift_frame", "shift_markdown"]

METRICS = ((n.ACCURACY, "accuracy"), (n.ECE, "ECE (15 bins)"), (n.NLL, "NLL"),
           (n.BRIER, "Brier score (sum over classes)"))
MEAN = "mean"  # the column of the mean over corruptions


def shift_frame(results: pd.DataFrame, kind: str) -> pd.DataFrame:
    """The ``shift`` rows of one kind with its level knob as a column (``angle`` or
    ``corruption``); empty when the results have none."""
    rows = results[results["task"] == n.SHIFT]
    if rows.empty:
        return rows
    rows = with_knobs(rows, n.SHIFT)
    rows = rows[rows[n.SHIFT] == kind]
    if rows.empty:
        return rows
    return with_knobs(rows, n.ANGLE if kind == n.ShiftKind.ROTATED else n.CORRUPTION)


def _with_mean(rows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """``rows`` plus, per ``by`` and run, a ``corruption = mean`` row (the mean over
    corruptions of the run)."""
    mean = rows.groupby([*by, "run"], sort=False)["value"].mean().reset_index()
    return pd.concat([rows, mean.assign(**{n.CORRUPTION: MEAN})], ignore_index=True)


def _tables(rows: pd.DataFrame, key: str, what: str, order: list[tuple]) -> list[str]:
    out = []
    for metric, title in METRICS:
        sel = rows[(rows["metric"] == metric) & (rows["measure"] == "")]
        if len(sel):
            if key == n.CORRUPTION:
                sel = _with_mean(sel, ["model", "metric", "measure"])
            out.append(grid_table(sel, [key], f"{what}: {title}", order=order, label=False))
    unc = rows[rows["metric"] == n.MEAN_UNCERTAINTY]
    if len(unc):
        if key == n.CORRUPTION:
            unc = _with_mean(unc, ["model", "metric", "measure"])
        out.append(grid_table(unc, [key], f"{what}: mean uncertainty per measure (higher = "
                              "more uncertain)", by=("model", "measure"), order=order,
                              label=False))
    return out


def shift_markdown(results: pd.DataFrame) -> str | None:
    """The shift detail tables as GitHub Markdown, or None when the runs shifted nothing."""
    results = with_run(results)
    out = ["# Calibration under dataset shift\n",
           "Mean ± sample std over runs when several; the protocol is in the leaderboard "
           "legend. Accuracy and Brier score are fractions; NLL in nats.\n"]
    rotated = shift_frame(results, n.ShiftKind.ROTATED)
    if len(rotated):
        angles = [(a,) for a in sorted(rotated[n.ANGLE].unique())]
        out.append("Rotated MNIST: columns are the angle in degrees, counter-clockwise; 0 is "
                   "the clean test set.\n")
        out += _tables(rotated, n.ANGLE, "Rotated MNIST", angles)
    corrupted = shift_frame(results, n.ShiftKind.CORRUPTED)
    if len(corrupted):
        names = [(c,) for c in dict.fromkeys(corrupted[n.CORRUPTION])] + [(MEAN,)]
        out.append("MNIST-C: columns are the corruptions in the reference's order, then "
                   "their mean.\n")
        out += _tables(corrupted, n.CORRUPTION, "MNIST-C", names)
    return "\n".join(out) if len(out) > 2 else None
