"""The terminal summary printed at the end of ``robustbnn bench`` / ``report``."""

from __future__ import annotations

import pandas as pd
from tabulate import tabulate

from robustbnn.report.escape import visible
from robustbnn.report.leaderboard import format_cell, leaderboard

__all__ = ["summary_table"]

# A narrow subset of the leaderboard, so the table fits a terminal (prefix matches).
SUMMARY = ("clean_accuracy", "clean_nll", "fgsm_accuracy_eps0.1_S32", "targeted_success",
           "ood_auroc_mean", "seconds_per_1000_predictions", "sanity")


def summary_table(results: pd.DataFrame) -> str:
    """The leaderboard's key columns as a plain-text table, in the leaderboard's order."""
    board = leaderboard(results)
    cols = [c for key in SUMMARY for c in board.columns if c.key.startswith(key)
            and not c.key.endswith("_measure")]
    # visible(): a control or bidirectional character in a name prints as \uXXXX
    rows = [[visible(model), *(visible(format_cell(board, model, c)) for c in cols)]
            for model in board.table.index]
    headers = ["model", *(c.title for c in cols)]
    align = ("left", *("right" if c.kind == "number" else "left" for c in cols))
    table = tabulate(rows, headers=headers, disable_numparse=True, colalign=align)
    return board.order_text() + "\n" + table
