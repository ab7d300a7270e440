"""The columns of calibration under dataset shift: rotated MNIST and MNIST-C
(:func:`shift_columns`)."""

from __future__ import annotations

import pandas as pd
from scipy.integrate import trapezoid

from robustbnn.report.column import SHIFT, Column, per_run
from robustbnn.results import names as n
from robustbnn.results.schema import with_knobs

__all__ = ["shift_columns"]


def _rotation_auc(rows: pd.DataFrame) -> pd.Series:
    """Per (model, run), the area under accuracy against angle by the trapezoid rule, divided
    by the angle range: the accuracy averaged over rotations, in [0, 1]."""
    out = {}
    for key, group in rows.groupby(["model", "run"], sort=False):
        curve = group.groupby(n.ANGLE)["value"].mean().sort_index()
        span = curve.index[-1] - curve.index[0]
        out[key] = (float(trapezoid(curve.values, curve.index)) / span if span > 0
                    else float(curve.iloc[0]))
    return pd.Series(out, dtype="float64").rename_axis(["model", "run"])


def shift_columns(results: pd.DataFrame) -> list[tuple[Column, pd.Series]]:
    """Calibration under dataset shift: the area under accuracy against rotation angle, the
    ECE averaged over the angles, and accuracy and ECE averaged over the MNIST-C corruptions."""
    rows = results[results["task"] == n.SHIFT]
    if rows.empty:
        return []
    rows = with_knobs(rows, n.SHIFT)
    out: list[tuple[Column, pd.Series]] = []
    rotated = rows[rows[n.SHIFT] == n.ShiftKind.ROTATED]
    if len(rotated):
        rotated = with_knobs(rotated, n.ANGLE)
        lo, hi = rotated[n.ANGLE].min(), rotated[n.ANGLE].max()
        count = rotated[n.ANGLE].nunique()
        acc = rotated[rotated["metric"] == n.ACCURACY]
        out.append((Column("rotated_accuracy_auc", f"rotated acc AUC {lo:g}–{hi:g}°",
                           n.ACCURACY, aspect=SHIFT), _rotation_auc(acc)))
        ece = rotated[rotated["metric"] == n.ECE]
        out.append((Column("rotated_ece_mean", f"rotated ECE (mean of {count} angles)", n.ECE,
                           aspect=SHIFT), per_run(ece)))
    corrupted = rows[rows[n.SHIFT] == n.ShiftKind.CORRUPTED]
    if len(corrupted):
        count = with_knobs(corrupted, n.CORRUPTION)[n.CORRUPTION].nunique()
        for metric, title in ((n.ACCURACY, "acc"), (n.ECE, "ECE")):
            out.append((Column(f"corrupted_{metric}_mean",
                               f"MNIST-C {title} (mean of {count})", metric, aspect=SHIFT),
                        per_run(corrupted[corrupted["metric"] == metric])))
    return out
