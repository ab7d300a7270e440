"""The closing summary of ``robustbnn bench`` / ``report``: the headline table as plain text
and where the reports are."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
from tabulate import tabulate

from robustbnn.report.aspects import aspect_file
from robustbnn.report.column import ASPECTS
from robustbnn.report.escape import visible
from robustbnn.report.families import model_families
from robustbnn.report.headline import headline
from robustbnn.report.leaderboard import Leaderboard, format_cell, leaderboard
from robustbnn.results.manifest import read_manifest

__all__ = ["SHORT", "report_paths", "summary_table"]

# Terminal headers of the headline's columns (by key prefix), two lines each, so the table
# fits about 120 characters; a column not listed keeps its title.
SHORT = {"family": "family", "clean_accuracy": "clean\nacc", "clean_nll": "NLL",
         "robust_accuracy_allk": "robust acc\n(all-k PGD)", "detection_aware": "det.-aware\nacc",
         "ood_auroc_mean": "OOD\nAUROC", "adv_ood_auroc": "worst-case\nOOD AUROC",
         "corrupted_accuracy_mean": "MNIST-C\nacc", "rotated_accuracy_auc": "rotated\nacc AUC",
         "seconds_per_1000_predictions": "s / 1k\npred."}


def _short(key: str, title: str) -> str:
    return next((v for k, v in SHORT.items() if key.startswith(k)), title)


def _plain(board: Leaderboard, model: str, key: str) -> str:
    """A headline cell without the measure's name (the terminal has no room for it)."""
    col = board.column(key)
    bare = dataclasses.replace(
        board, carried=tuple(c for c in board.carried if c.key != col.measure_key))
    return visible(format_cell(bare, model, col))


def summary_table(results: pd.DataFrame, runs: list[dict] | None = None, *,
                  sort: str | None = None) -> str:
    """The headline leaderboard as a plain-text table, in its order, with the order above it.

    Args:
        results: The combined results (:func:`robustbnn.report.render.load_runs`).
        runs: Their ``run.json`` payloads, for the families (default: every model "other").
        sort: Column key to sort by (default: as the leaderboard sorts).
    """
    full = leaderboard(results, sort=sort)
    board = headline(full, model_families(runs or [], full.table.index))
    # visible(): a control or bidirectional character in a name prints as \uXXXX
    rows = [[visible(model), *(_plain(board, model, c.key) for c in board.columns)]
            for model in board.table.index]
    headers = ["model", *(_short(c.key, c.title) for c in board.columns)]
    align = ("left", *("right" if c.kind == "number" else "left" for c in board.columns))
    table = tabulate(rows, headers=headers, disable_numparse=True, colalign=align)
    eps = [c.title for c in board.columns if c.key.startswith("robust_accuracy_allk")]
    note = f"robust acc = {eps[0]}; † = upper bound.\n" if eps else ""
    return board.order_text() + "\n" + table + "\n" + note


def report_paths(out_dir: Path) -> str:
    """Where the reports of the last render of ``out_dir`` are, one line per kind, from the
    render's manifest (:data:`robustbnn.results.manifest.MANIFEST`).

    Example:
        >>> report_paths(Path("/nowhere"))
        ''
    """
    out_dir = Path(out_dir)
    files = set(read_manifest(out_dir))

    def listed(names: list[str], more: tuple[str, ...] = ()) -> str:
        shown = ", ".join(str(out_dir / f) for f in names if f in files)
        rest = [Path(f).suffix for f in more if f in files]
        return shown + (f" (and {', '.join(rest)})" if shown and rest else "")

    aspects = sorted((f for f in files if f.startswith("table_") and f.endswith(".md")),
                     key=lambda f: _ASPECT_ORDER.get(f, len(_ASPECT_ORDER)))
    kinds = (("leaderboard", listed(["leaderboard.md", "leaderboard.html"],
                                    ("leaderboard.csv", "leaderboard.json"))),
             ("by aspect", listed(aspects)),
             ("details", listed(["attack.md", "ood.md", "shift.md"])),
             ("all columns", listed(["all_columns.csv"], ("all_columns.json",))))
    lines = [f"  {what:<12} {text}" for what, text in kinds if text]
    figures = [f for f in files if f.startswith("figures/")]
    if figures:
        lines.append(f"  {'figures':<12} {out_dir / 'figures'}/ ({len(figures)} files)")
    return "\n".join(lines) + ("\n" if lines else "")


# Aspect tables in page order.
_ASPECT_ORDER = {f"{aspect_file(a)}.md": i for i, a in enumerate(ASPECTS)}
