"""Figures drawn from a results table alone (BHN Fig. 5 / Fig. 7 and Li & Gal Fig. 7 styles).

Every function takes the tidy results frame (``robustbnn.results.store.read_results``) and
writes PNGs, so ``robustbnn report`` can redraw them without running a model.

* ``attack_<model>.png``: FGSM accuracy, mean uncertainty per measure, adversary-detection
  and error-detection AUROC per measure against eps; one column per S_attack (1 and 32 side
  by side).
* ``targeted_<model>.png``: the targeted attack against step: accuracy on the true label and
  target success, mean uncertainty per measure, and the L-infinity / L2 distortion.
* ``fgsm_accuracy.png``: FGSM accuracy against eps for every model, a row of panels per
  S_attack and a column per model family.
* ``<task>_accuracy.png`` for every other attack task (``pgd`` and plug-in attacks: rows with
  ``eps`` and ``S_attack`` knobs and metric accuracy): accuracy against eps for every model,
  a panel per model family, one line style per S_attack.
* the robustness figures of :mod:`robustbnn.report.robust_figures` (``budget_accuracy.png``,
  ``budget_<model>.png``, ``detection_aware.png``, ``ood_roc.png``);
* the dataset-shift figures of :mod:`robustbnn.report.shift_figures` (``shift_rotation.png``,
  ``shift_corruption.png``, ``shift_<model>.png``, ``reliability.png``,
  ``reliability_<model>.png``);
* ``ood_<model>.png``: from the per-example scores (``scores/``): the CDF of predictive
  entropy on the test set and on each OOD set (Louizos & Welling 2017 / Kristiadi et al. 2019
  Fig. 2 style), and the ROC curve per OOD set for the measure with the best AUROC there (a
  plug-in measure's scores from its rows' examples, :mod:`robustbnn.report.roc_scores`).

Figures with every model draw a column of panels per model family
(:func:`robustbnn.report.families.panel_groups`, from the families ``run.json`` records) with
one legend below, and give each model one colour-and-marker pair in all of them
(:func:`robustbnn.report.styles.styles_for`).

File names built from model and task names go through :func:`robustbnn.results.paths.safe_name`
and are checked to stay in ``figures/``; every figure is written as a PNG and an SVG beside it
(:func:`robustbnn.report.canvas.save_figure`), each atomically under a unique temporary name,
so concurrent renders of one folder do not collide.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from robustbnn.metrics.ranking import roc_curve_points
from robustbnn.report import robust_figures as rf
from robustbnn.report import shift_figures as sf
from robustbnn.report.canvas import (
    family_legend,
    family_panels,
    plain_log_ticks,
    save_figure,
    svg_twin,
)
from robustbnn.report.families import model_families, panel_groups
from robustbnn.report.roc_scores import missing, roc_scores
from robustbnn.report.styles import styles_for
from robustbnn.results import names as n
from robustbnn.results.paths import child, safe_name
from robustbnn.results.schema import attack_tasks, with_knobs
from robustbnn.results.scores import read_scores, scores_path

__all__ = ["HEADLINE", "attack_accuracy_figure", "attack_figure", "fgsm_overview",
           "headline_figures", "ood_figure", "recorded_families", "targeted_figure",
           "write_figures"]


def _by_eps(rows: pd.DataFrame) -> tuple[pd.DataFrame, list[float]]:
    """Attack rows with float ``eps`` and ``S_attack`` columns, and the S_attack values present."""
    if rows.empty:
        return rows, []
    rows = with_knobs(rows, n.EPS, n.S_ATTACK)
    return rows, sorted(rows[n.S_ATTACK].dropna().unique())


def attack_figure(results: pd.DataFrame, model: str, path: Path) -> Path | None:
    """FGSM curves of one model against eps, S_attack columns side by side (BHN Fig. 5/7).

    Returns:
        The path written, or None when the results hold no FGSM rows for ``model``.
    """
    rows, s_values = _by_eps(results[(results["model"] == model) & (results["task"] == n.FGSM)])
    if rows.empty:
        return None
    panels = [(n.ACCURACY, "accuracy"), (n.MEAN_UNCERTAINTY, "mean uncertainty"),
              (n.ADVERSARY_DETECTION, "adversary detection AUROC"),
              (n.ERROR_DETECTION, "error detection AUROC")]
    fig, axes = plt.subplots(len(panels), len(s_values), figsize=(4.5 * len(s_values), 11),
                             squeeze=False, sharex=True, sharey="row")
    for col, s in enumerate(s_values):
        at_s = rows[rows[n.S_ATTACK] == s]
        for row, (metric, label) in enumerate(panels):
            ax = axes[row][col]
            sel = at_s[at_s["metric"] == metric]
            for measure, curve in sel.groupby("measure", sort=True):
                curve = curve.groupby(n.EPS)["value"].mean()
                ax.plot(curve.index, curve.values, marker="o", ms=3, label=measure or metric)
            if metric in (n.ADVERSARY_DETECTION, n.ERROR_DETECTION):
                ax.axhline(0.5, color="grey", lw=0.8, ls=":")
            ax.set_xscale("log")
            plain_log_ticks(ax.xaxis)
            ax.set_ylabel(label)
            if row == 0:
                ax.set_title(f"{model}: FGSM, S_attack = {s:g}")
            if row == len(panels) - 1:
                ax.set_xlabel("eps")
            if metric != n.ACCURACY and not sel.empty and col == len(s_values) - 1:
                ax.legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, path)


def targeted_figure(results: pd.DataFrame, model: str, path: Path) -> Path | None:
    """The targeted attack of one model against step (Li & Gal Fig. 7).

    Returns:
        The path written, or None when the results hold no targeted rows for ``model``.
    """
    rows = results[(results["model"] == model) & (results["task"] == n.TARGETED)]
    if rows.empty:
        return None
    rows = with_knobs(rows, n.STEP)
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    groups = [([n.ACCURACY, n.TARGET_SUCCESS], "fraction"), ([n.MEAN_UNCERTAINTY], "mean"),
              ([n.LINF, n.L2], "distortion")]
    titles = ["accuracy and target success", "mean uncertainty", "distortion from x"]
    for ax, (metrics, ylabel), title in zip(axes, groups, titles, strict=True):
        sel = rows[rows["metric"].isin(metrics)]
        for (metric, measure), curve in sel.groupby(["metric", "measure"], sort=True):
            curve = curve.groupby(n.STEP)["value"].mean()
            ax.plot(curve.index, curve.values, marker="o", ms=3, label=measure or metric)
        ax.set_xlabel("step")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        if not sel.empty:
            ax.legend(fontsize=7)
    fig.suptitle(f"{model}: targeted iterative FGSM")
    fig.tight_layout()
    return save_figure(fig, path)


def fgsm_overview(results: pd.DataFrame, path: Path, *,
                  families: Mapping[str, str] | None = None) -> Path | None:
    """FGSM accuracy against eps for every model: a row per S_attack, a column per family.

    Args:
        results: The results frame.
        path: Where the PNG goes (the SVG beside it).
        families: Each model's family (:func:`robustbnn.report.families.model_families`);
            without, the models are split into panels of a readable size.

    Returns:
        The path written, or None when the results hold no FGSM accuracy rows.
    """
    rows = results[(results["task"] == n.FGSM) & (results["metric"] == n.ACCURACY)]
    if rows.empty:
        return None
    rows = with_knobs(rows, n.EPS, n.S_ATTACK)
    s_values = sorted(rows[n.S_ATTACK].dropna().unique())
    styles = styles_for(results["model"])
    groups = panel_groups(rows["model"], families)
    fig, axes = family_panels(len(s_values), groups, sharey=True)
    for i, s in enumerate(s_values):
        at_s = rows[rows[n.S_ATTACK] == s]
        for j, (group, members) in enumerate(groups.items()):
            ax = axes[i][j]
            for model in members:
                curve = at_s[at_s["model"] == model].groupby(n.EPS)["value"].mean()
                if len(curve):
                    ax.plot(curve.index, curve.values, ms=4, label=model, **styles[model])
            ax.set_xscale("log")
            plain_log_ticks(ax.xaxis)
            ax.set_title(f"{group}, S_attack = {s:g}", fontsize=9)
            ax.grid(alpha=0.3)
        axes[i][0].set_ylabel("accuracy")
    for ax in axes[-1]:
        ax.set_xlabel("eps")
    fig.suptitle("FGSM accuracy against eps")
    family_legend(fig, groups, styles)
    return save_figure(fig, path)


def attack_accuracy_figure(results: pd.DataFrame, task: str, path: Path, *,
                           families: Mapping[str, str] | None = None) -> Path | None:
    """Accuracy against eps under attack ``task`` for every model, a panel per family, one
    line style per S_attack.

    For PGD and plug-in attacks: any task whose rows carry ``eps`` and ``S_attack``.

    Args:
        results: The results frame.
        task: The attack task.
        path: Where the PNG goes (the SVG beside it).
        families: Each model's family, as for :func:`fgsm_overview`.

    Returns:
        The path written, or None when the results hold no accuracy rows of ``task``.
    """
    rows, s_values = _by_eps(results[(results["task"] == task)
                                     & (results["metric"] == n.ACCURACY)])
    if rows.empty:
        return None
    line_styles = ["-", "--", ":", "-."]
    looks = styles_for(results["model"])
    groups = panel_groups(rows["model"], families)
    fig, axes = family_panels(1, groups, sharey=True)
    wide = rows[n.EPS].min() > 0 and rows[n.EPS].max() >= 10 * rows[n.EPS].min()
    for ax, (group, members) in zip(axes[0], groups.items(), strict=True):
        for model in members:
            mine = rows[rows["model"] == model]
            for j, s in enumerate(s_values):
                curve = mine[mine[n.S_ATTACK] == s].groupby(n.EPS)["value"].mean()
                if len(curve):
                    ax.plot(curve.index, curve.values, ms=4, ls=line_styles[j % 4],
                            color=looks[model]["color"], marker=looks[model]["marker"],
                            label=f"{model}, S_attack = {s:g}")
        if wide:  # a log axis only for a wide eps range
            ax.set_xscale("log")
            plain_log_ticks(ax.xaxis)
        ax.set_xlabel("eps")
        ax.set_title(group, fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("accuracy")
    axes[0][0].legend([Line2D([], [], color="black", ls=line_styles[j % 4])
                       for j in range(len(s_values))],
                      [f"S_attack = {s:g}" for s in s_values], fontsize=7)
    fig.suptitle(f"{task.upper() if task == n.PGD else task} accuracy under attack")
    family_legend(fig, groups, looks, ls="-")
    return save_figure(fig, path)


def ood_figure(results: pd.DataFrame, run_dir: Path, model: str, path: Path) -> Path | None:
    """Entropy CDFs (in vs each OOD set) and ROC curves (best measure) of one model.

    A plug-in measure's scores come from its rows' examples
    (:func:`~robustbnn.report.roc_scores.roc_scores`); a set whose best measure has none
    keeps its legend entry, which says so, without a curve.

    Returns:
        The path written, or None when the run holds no OOD scores for ``model``.
    """
    rows = results[(results["model"] == model) & (results["task"] == n.OOD)
                   & (results["metric"] == n.AUROC)]
    sets = [d for d in dict.fromkeys(rows["dataset"])
            if scores_path(run_dir, model, d).is_file()]
    if not sets:
        return None
    fig, (cdf, roc) = plt.subplots(1, 2, figsize=(11, 4.2))
    for i, dataset in enumerate(sets):
        is_ood, scores = read_scores(scores_path(run_dir, model, dataset))
        entropy = scores["predictive_entropy"]
        if i == 0:
            x = np.sort(entropy[is_ood == 0])
            cdf.plot(x, np.arange(1, len(x) + 1) / len(x), color="black", lw=2,
                     label="test (in)")
        x = np.sort(entropy[is_ood == 1])
        cdf.plot(x, np.arange(1, len(x) + 1) / len(x), label=dataset)
        per = rows[rows["dataset"] == dataset].groupby("measure")["value"].mean()
        best = per.idxmax()
        label = f"{dataset}: {best} (AUROC {per[best]:.3f}"
        points = ((is_ood, scores[best]) if best in scores
                  else roc_scores(results, run_dir, model, dataset, best))
        if points is None:  # an empty line: the legend still names the set and says why
            roc.plot([], [], label=f"{label}; {missing(model, dataset, best)})")
            continue
        fpr, tpr, _ = roc_curve_points(*points)
        roc.plot(fpr, tpr, label=f"{label})")
    cdf.set_xlabel("predictive entropy (nats)")
    cdf.set_ylabel("fraction of images ≤ x")
    cdf.set_title(f"{model}: CDF of predictive entropy")
    cdf.legend(fontsize=7)
    roc.plot([0, 1], [0, 1], color="grey", lw=0.8, ls=":")
    roc.set_xlabel("false positive rate (test images flagged)")
    roc.set_ylabel("true positive rate (OOD images flagged)")
    roc.set_title(f"{model}: ROC, best measure per OOD set")
    roc.legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, path)


def _named(folder: Path, prefix: str, name: str) -> Path:
    """``folder/<prefix>_<name>.png`` with ``name`` mapped to a safe file name."""
    return child(folder, f"{prefix}_{safe_name(name)}.png", name=name)


def recorded_families(run_dir: Path, models: list[str]) -> dict[str, str]:
    """Each model's family as ``run_dir/run.json`` records it (``"other"`` where it does not)."""
    file = Path(run_dir) / "run.json"
    try:
        run = json.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}
    except (OSError, ValueError):  # the leaderboard reports a bad run.json; a figure need not
        run = {}
    return model_families([run] if isinstance(run, dict) else [], models)


def write_figures(results: pd.DataFrame, run_dir: Path, *, out_dir: Path | None = None,
                  families: Mapping[str, str] | None = None) -> list[Path]:
    """Every figure of a run into ``out_dir/figures`` (default: ``run_dir``); returns the paths.

    Uses the results table and, for the OOD figures, the per-example ``scores/`` files of
    ``run_dir``.

    Args:
        results: The results frame.
        run_dir: The (first) run folder: its scores, and its ``run.json`` for the families.
        out_dir: Where ``figures/`` goes.
        families: Each model's family (:func:`robustbnn.report.families.model_families` of
            every run); default: as ``run_dir/run.json`` records them.

    Returns:
        Every file written: each figure's PNG followed by its SVG twin.

    Raises:
        UnsafeNameError: For a model or task name that cannot name a file in ``figures/``.
    """
    figures = Path(run_dir if out_dir is None else out_dir) / "figures"
    # Every path first, so a refused name stops the render before anything is drawn.
    tasks = {task: child(figures, f"{safe_name(task)}_accuracy.png", name=task)
             for task in attack_tasks(results)}
    models = {model: [_named(figures, prefix, model) for prefix in ("attack", "targeted", "ood")]
              for model in dict.fromkeys(results["model"])}
    budget = {model: _named(figures, "budget", model) for model in models}
    shift = {model: (_named(figures, "shift", model), _named(figures, "reliability", model))
             for model in models}

    if families is None:
        families = recorded_families(run_dir, list(models))
    written = headline_figures(results, run_dir, figures, families=families)
    for task, path in tasks.items():
        written.append(attack_accuracy_figure(results, task, path, families=families))
    for model, (attack, targeted, ood) in models.items():
        written.append(attack_figure(results, model, attack))
        written.append(targeted_figure(results, model, targeted))
        written.append(ood_figure(results, run_dir, model, ood))
        written.append(rf.budget_figure(results, model, budget[model]))
        written.append(sf.shift_figure(results, model, shift[model][0]))
        written.append(sf.reliability_figure(results, model, shift[model][1]))
    written += [sf.corruption_overview(results, figures / "shift_corruption.png",
                                       families=families)]
    return [q for p in written if p is not None for q in (p, svg_twin(p))]


# The figures the HTML leaderboard shows inline, in this order (the rest are linked).
HEADLINE = ("fgsm_accuracy.png", "budget_accuracy.png", "detection_aware.png", "ood_roc.png",
            "shift_rotation.png", "reliability.png")


def headline_figures(results: pd.DataFrame, run_dir: Path, figures: Path, *,
                     families: Mapping[str, str] | None = None) -> list[Path | None]:
    """The overview figures of :data:`HEADLINE` (None where the results have no such rows);
    PNG paths, each with an SVG twin beside it."""
    return [fgsm_overview(results, figures / HEADLINE[0], families=families),
            rf.budget_overview(results, figures / HEADLINE[1], families=families),
            rf.detection_figure(results, figures / HEADLINE[2]),
            rf.ood_roc_overview(results, run_dir, figures / HEADLINE[3], families=families),
            sf.rotation_overview(results, figures / HEADLINE[4], families=families),
            sf.reliability_overview(results, figures / HEADLINE[5], families=families)]
