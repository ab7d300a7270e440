"""The robustness leaderboard's figures, drawn from the results table (and OOD scores) alone.

* ``budget_accuracy.png``: every model's PGD-EOT accuracy against the attack's cost in
  gradient evaluations (S_attack x steps x restarts, log axis), a row of panels per eps and a
  column per model family. A model's
  curve is its strongest attack within each cost (the lowest accuracy of any grid point that
  costs no more), so it falls as the budget grows; a curve still falling at its right end is
  what ``eot_not_converged`` flags.
* ``budget_<model>.png``: one model's grid, one line per S_attack over its step counts, and
  the all-k accuracy of the largest budget (a star).
* ``detection_aware.png``: detection-aware robust accuracy per model, non-adaptive against
  adaptive attack, for the leaderboard's detector.
* ``ood_roc.png``: every model's ROC curve per OOD set (a row each), a column per model family,
  for its leaderboard OOD measure.

Every model keeps one colour-and-marker pair in every figure
(:func:`robustbnn.report.styles.styles_for`); the family panels and their one legend come from
:func:`robustbnn.report.canvas.family_panels`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, NullFormatter

from robustbnn.metrics.ranking import roc_curve_points
from robustbnn.report.canvas import family_legend, family_panels, save_figure
from robustbnn.report.columns import compute_columns
from robustbnn.report.families import panel_groups
from robustbnn.report.roc_scores import missing, roc_scores
from robustbnn.report.styles import styles_for
from robustbnn.results import names as n
from robustbnn.results.schema import with_knobs
from robustbnn.results.scores import scores_path

__all__ = ["budget_figure", "budget_overview", "detection_figure", "ood_roc_overview"]


def _budget_rows(results: pd.DataFrame) -> pd.DataFrame:
    rows = results[(results["task"] == n.PGD_BUDGET) & (results["metric"] == n.ACCURACY)]
    if rows.empty:
        return rows
    rows = with_knobs(rows, n.EPS, n.S_ATTACK, n.STEPS, n.GRADIENT_EVALUATIONS)
    keys = ["model", n.EPS, n.S_ATTACK, n.STEPS, n.GRADIENT_EVALUATIONS]
    return rows.groupby(keys, sort=False)["value"].mean().reset_index()  # mean over runs


def _log_cost(ax: plt.Axes) -> None:
    """A log x axis labelled with plain numbers (10, 40, 640), not 10^1 notation."""
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.grid(alpha=0.3)


def _panels(count: int) -> tuple[plt.Figure, np.ndarray]:
    return plt.subplots(1, count, figsize=(5.8 * count, 4.4), squeeze=False, sharey=True)


def budget_overview(results: pd.DataFrame, path: Path, *,
                    families: Mapping[str, str] | None = None) -> Path | None:
    """Strongest-attack-within-cost accuracy against cost for every model: a row of panels
    per eps, a column per model family (``families``, as
    :func:`robustbnn.report.families.model_families` gives them)."""
    rows = _budget_rows(results)
    if rows.empty:
        return None
    styles = styles_for(results["model"])
    groups = panel_groups(rows["model"], families)
    eps_values = sorted(rows[n.EPS].unique())
    fig, axes = family_panels(len(eps_values), groups, sharey=True)
    for i, eps in enumerate(eps_values):
        at = rows[rows[n.EPS] == eps]
        for ax, (group, members) in zip(axes[i], groups.items(), strict=True):
            for model in members:
                mine = at[at["model"] == model]
                if mine.empty:
                    continue
                by_cost = mine.groupby(n.GRADIENT_EVALUATIONS)["value"].min().sort_index()
                frontier = by_cost.cummin()
                ax.plot(frontier.index, frontier.values, ms=4, label=model, **styles[model])
            _log_cost(ax)
            ax.set_title(f"{group}, ε = {eps:g}", fontsize=9)
        axes[i][0].set_ylabel("accuracy")
    for ax in axes[-1]:
        ax.set_xlabel("gradient evaluations per input")
    fig.suptitle("PGD-EOT accuracy of the strongest attack within a cost "
                 "(gradient evaluations = S_attack × steps)")
    family_legend(fig, groups, styles)
    return save_figure(fig, path)


def budget_figure(results: pd.DataFrame, model: str, path: Path) -> Path | None:
    """One model's budget grid: a line per S_attack over steps, plus its all-k accuracy."""
    rows = _budget_rows(results[results["model"] == model])
    if rows.empty:
        return None
    allk = results[(results["model"] == model) & (results["task"] == n.WORST_OF_K)
                   & (results["metric"] == n.ALL_K_ACCURACY)]
    allk = with_knobs(allk, n.EPS, n.GRADIENT_EVALUATIONS, n.K) if len(allk) else allk
    eps_values = sorted(rows[n.EPS].unique())
    fig, axes = _panels(len(eps_values))
    for ax, eps in zip(axes[0], eps_values, strict=True):
        at = rows[rows[n.EPS] == eps]
        for s, line in at.groupby(n.S_ATTACK, sort=True):
            line = line.sort_values(n.GRADIENT_EVALUATIONS)
            ax.plot(line[n.GRADIENT_EVALUATIONS], line["value"], marker="o", ms=4,
                    label=f"S_attack = {s:g} (steps {', '.join(f'{v:g}' for v in line[n.STEPS])})")
        if len(allk):
            mine = allk[allk[n.EPS] == eps]
            if len(mine):
                ax.plot(mine[n.GRADIENT_EVALUATIONS].mean(), mine["value"].mean(), "*", ms=12,
                        color="black", label=f"largest budget, all-{mine[n.K].max():g} accuracy")
        _log_cost(ax)
        ax.set_xlabel("gradient evaluations per input (S_attack × steps)")
        ax.set_title(f"{model}: PGD-EOT accuracy, ε = {eps:g}")
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("accuracy")
    fig.tight_layout()
    return save_figure(fig, path)


def _columns(results: pd.DataFrame) -> tuple[list, dict]:
    """The leaderboard's columns of ``results`` (one run per seed when no ``run`` column)."""
    if "run" not in results:
        results = results.assign(run=results["seed"])
    return compute_columns(results)


def detection_figure(results: pd.DataFrame, path: Path) -> Path | None:
    """Detection-aware robust accuracy per model: non-adaptive vs adaptive, leaderboard
    detector."""
    columns, values = _columns(results)
    keys = [c.key for c in columns if c.key.startswith("detection_aware_eps")]
    if not keys:
        return None
    adaptive = next(k for k in keys if not k.endswith(("_nonadaptive", "_measure")))
    plain, measure = values[f"{adaptive}_nonadaptive"], values[f"{adaptive}_measure"]
    mine = values[adaptive]
    models = list(dict.fromkeys(mine.index.get_level_values("model")))
    title = next(c.title for c in columns if c.key == adaptive)
    a = [mine.xs(m, level="model").mean() for m in models]
    p = [plain.xs(m, level="model").mean() if m in plain.index.get_level_values("model")
         else np.nan for m in models]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.7 * len(models) + 2), 4.4))
    x = np.arange(len(models))
    ax.bar(x - 0.2, p, 0.4, label="non-adaptive PGD-EOT", color="#9ecae1")
    ax.bar(x + 0.2, a, 0.4, label="adaptive (detector-aware) PGD-EOT", color="#08519c")
    ax.set_xticks(x, [f"{m}\n({measure.get(m, '?')})" for m in models], rotation=45,
                  ha="right", fontsize=7)
    ax.set_ylabel("fraction correct or flagged")
    ax.set_title(title.replace(" adaptive", ""))
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, path)


def ood_roc_overview(results: pd.DataFrame, run_dir: Path, path: Path, *,
                     families: Mapping[str, str] | None = None) -> Path | None:
    """Every model's ROC per OOD set (held-out classes excluded; a row of panels each), a
    column per model family, for its leaderboard OOD measure (the best mean AUROC); from the
    first run's scores (:func:`~robustbnn.report.roc_scores.roc_scores`: a plug-in measure's
    from its rows' examples). A curve without scores is left out, its legend entry says so."""
    _, values = _columns(results)
    if "ood_auroc_mean_measure" not in values:
        return None
    measure = values["ood_auroc_mean_measure"]
    ood = results[(results["task"] == n.OOD) & ~results["dataset"].str.startswith("heldout:")]
    sets = list(dict.fromkeys(ood["dataset"]))
    styles = styles_for(results["model"])
    found = [(d, m) for d in sets for m in measure.index
             if scores_path(run_dir, m, d).is_file()]
    if not found:
        return None
    groups = panel_groups(measure.index, families)
    labels = {m: f"{m} ({measure[m]})" for m in measure.index}
    fig, axes = family_panels(len(sets), groups, size=(3.6, 3.4), sharey=True)
    for i, dataset in enumerate(sets):
        for ax, (group, members) in zip(axes[i], groups.items(), strict=True):
            for model in members:
                if not scores_path(run_dir, model, dataset).is_file():
                    continue
                points = roc_scores(results, run_dir, model, dataset, measure[model])
                if points is None:
                    note = missing(model, dataset, measure[model])
                    labels[model] = f"{model} ({measure[model]}; {note})"
                    continue
                fpr, tpr, _ = roc_curve_points(*points)
                style = styles[model]
                ax.plot(fpr, tpr, color=style["color"], ls=style["ls"], marker=style["marker"],
                        ms=3, markevery=0.1, lw=1, label=model)
            ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls=":")
            ax.set_title(f"{group}: test vs {dataset}", fontsize=9)
        axes[i][0].set_ylabel("true positive rate")
    for ax in axes[-1]:
        ax.set_xlabel("false positive rate")
    fig.suptitle("ROC curves: OOD images flagged (true positives) against test images flagged "
                 "(false positives), each model's leaderboard measure")
    family_legend(fig, groups, styles, labels=labels)
    return save_figure(fig, path)
