"""The fidelity report: how close each method's predictive is to the reference posterior's, beside
its robustness and OOD detection, and whether the two go together (docs/fidelity.md).

``fidelity.md`` holds one row per model: agreement, total variation and KL against the
reference (the ``fidelity`` columns of :mod:`robustbnn.report.columns`), then the outcomes the
leaderboard reports (clean accuracy, PGD-EOT all-k robust accuracy, detection-aware accuracy
under the adaptive attack, mean OOD AUROC and the worst-case OOD AUROC under attack), with the
reference's own row for where the true posterior stands. Below it, Spearman's rank
correlation over the approximate methods between each fidelity score and each outcome, with
its two-sided p-value (:func:`scipy.stats.spearmanr`) and the number of models: with ten
models a |ρ| below about 0.65 is not distinguishable from no association at the 5 % level.
``figures/fidelity.png`` plots each outcome against the total variation, one point per model
(seed spread as error bars), the reference's value as a dashed line.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from scipy.stats import spearmanr

from robustbnn.report.canvas import save_figure
from robustbnn.report.column import Column
from robustbnn.report.escape import escape
from robustbnn.report.leaderboard import Leaderboard
from robustbnn.report.styles import styles_for

__all__ = ["FIDELITY_KEYS", "correlations", "fidelity_figure", "fidelity_markdown",
           "outcome_columns"]

FIDELITY_KEYS = ("fidelity_agreement", "fidelity_total_variation", "fidelity_kl")
# The outcomes, by key prefix, in table order; the first column of the board with the prefix
# (and no companion suffix) is taken.
OUTCOME_PREFIXES = ("clean_accuracy", "robust_accuracy_allk_eps", "detection_aware_eps",
                    "ood_auroc_mean", "adv_ood_auroc_eps")
_COMPANIONS = ("_measure", "_bound", "_nonadaptive", "_clean")


def outcome_columns(board: Leaderboard) -> list[Column]:
    """The outcome columns of ``board`` the report sets beside fidelity, in table order."""
    out = []
    for prefix in OUTCOME_PREFIXES:
        for col in board.columns:
            if (col.kind == "number" and col.key.startswith(prefix)
                    and not col.key.endswith(_COMPANIONS)):
                out.append(col)
                break
    return out


def _fidelity_columns(board: Leaderboard) -> list[Column]:
    return [board.column(k) for k in FIDELITY_KEYS if any(c.key == k for c in board.columns)]


def _approximate(board: Leaderboard) -> list[str]:
    """The models with fidelity scores (every model but the reference), in board order."""
    t = board.table
    return [m for m in t.index if not math.isnan(t.at[m, FIDELITY_KEYS[0]])]


def correlations(board: Leaderboard) -> pd.DataFrame:
    """Spearman's ρ, its p-value and n between each fidelity score and each outcome, over the
    models with both (rows: fidelity score; one row per (score, outcome) pair)."""
    rows = []
    models = _approximate(board)
    for f in _fidelity_columns(board):
        for o in outcome_columns(board):
            pair = board.table.loc[models, [f.key, o.key]].dropna()
            n = len(pair)
            rho, p = (spearmanr(pair[f.key], pair[o.key]) if n >= 3 and
                      pair[f.key].nunique() > 1 and pair[o.key].nunique() > 1
                      else (math.nan, math.nan))
            rows.append({"fidelity": f.title, "outcome": o.title, "rho": float(rho),
                         "p": float(p), "n": n})
    return pd.DataFrame(rows)


def _cell(board: Leaderboard, model: str, col: Column) -> str:
    value = board.table.at[model, col.key]
    if isinstance(value, float) and math.isnan(value):
        return "–"
    text = format(value, col.fmt)
    std = board.table.get(f"{col.key}_std")
    if std is not None and not math.isnan(std[model]):
        text += f" ± {format(std[model], col.fmt)}"
    return text


def _one_seed(board: Leaderboard) -> list[str]:
    """Models without a seed spread in a board of several runs (their clean accuracy's std is
    NaN: one run holds them)."""
    std = board.table.get("clean_accuracy_std")
    if board.runs < 2 or std is None:
        return []
    return [m for m in board.table.index if math.isnan(std[m])]


def fidelity_markdown(board: Leaderboard, families: Mapping[str, str]) -> str | None:
    """``fidelity.md``, or None when the run has no fidelity cells."""
    if not _fidelity_columns(board):
        return None
    cols = [*_fidelity_columns(board), *outcome_columns(board)]
    seeds = ", ".join(map(str, board.seeds))
    lines = [
        "# Posterior fidelity beside robustness and OOD detection", "",
        f"Each method's Monte Carlo predictive on the test set against the reference "
        f"posterior's (agreement: top-1 match; TV: mean total variation; KL: mean "
        f"KL(reference ‖ model), nats), and the leaderboard's robustness and OOD columns. "
        f"{board.runs} run(s), seeds {seeds}; mean ± std over seeds. The reference's row has "
        f"no fidelity scores: it is the reference.", "",
        "| model | family | " + " | ".join(escape(c.title) for c in cols) + " |",
        "|---|---|" + "---:|" * len(cols),
    ]
    for model in board.table.index:
        cells = [_cell(board, model, c) for c in cols]
        lines.append(f"| {escape(model)} | {escape(families.get(model, 'other'))} | "
                     + " | ".join(cells) + " |")
    single = _one_seed(board)
    if single:
        lines += ["", f"Without ±: {', '.join(escape(m) for m in single)} ran one of the "
                  f"{board.runs} seeds (the reference is sampled once, at the suite's "
                  "fidelity_seed; later seeds score against it without sampling it again)."]
    corr = correlations(board)
    lines += ["", "## Does fidelity go with robustness and OOD detection?", "",
              "Spearman's rank correlation over the approximate methods (the reference left "
              "out), with its two-sided p-value. Agreement is better when higher, TV and KL "
              "when lower: a method closer to the reference is *more* robust when ρ is "
              "positive for agreement and negative for TV and KL. With n models a rank "
              "correlation needs |ρ| of about 0.65 (n = 10) to 0.75 (n = 8) to differ from none "
              "at the 5 % level; this is one task and one architecture, so a correlation "
              "here is evidence about this task, not a law.", "",
              "| fidelity | outcome | ρ | p | n |", "|---|---|---:|---:|---:|"]
    for r in corr.itertuples():
        rho = "–" if math.isnan(r.rho) else f"{r.rho:+.2f}"
        p = "–" if math.isnan(r.p) else f"{r.p:.3f}"
        lines.append(f"| {escape(r.fidelity)} | {escape(r.outcome)} | {rho} | {p} | {r.n} |")
    lines += ["", "Figure: [figures/fidelity.png](figures/fidelity.png).", ""]
    return "\n".join(lines)


def fidelity_figure(board: Leaderboard, path: Path) -> Path | None:
    """Each outcome against the TV to the reference, one point per model; None without
    fidelity cells."""
    if not any(c.key == FIDELITY_KEYS[1] for c in board.columns):
        return None
    outcomes = outcome_columns(board)
    if not outcomes:
        return None
    t = board.table
    models = _approximate(board)
    reference = [m for m in t.index if m not in models]
    styles = styles_for(t.index)
    tv = board.column(FIDELITY_KEYS[1])
    fig, axes = plt.subplots(1, len(outcomes), figsize=(3.4 * len(outcomes), 4.2),
                             squeeze=False)
    for ax, col in zip(axes[0], outcomes, strict=True):
        for m in models:
            style = styles[m]
            ax.errorbar(t.at[m, tv.key], t.at[m, col.key],
                        xerr=t.get(f"{tv.key}_std", pd.Series(dtype=float)).get(m),
                        yerr=t.get(f"{col.key}_std", pd.Series(dtype=float)).get(m),
                        fmt=style.get("marker", "o"), color=style.get("color"), label=m,
                        capsize=2)
        for m in reference:
            ax.axhline(t.at[m, col.key], color="black", linestyle="--", linewidth=1,
                       label=f"{m} (reference)")
        ax.set_xlabel(f"{tv.title} (lower = closer)")
        ax.set_ylabel(col.title)
        ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=8,
               frameon=False)
    fig.tight_layout(rect=(0, 0.16, 1, 1))  # the legend's rows below the panels
    return save_figure(fig, path)
