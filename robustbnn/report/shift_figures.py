"""Dataset-shift and reliability figures, drawn from the results table alone.

* ``shift_rotation.png``: every model's accuracy, ECE, NLL, Brier score and mean predictive
  entropy against the rotation angle (Ovadia et al. 2019, Fig. 1 style), a row per metric and
  a column per model family.
* ``shift_corruption.png``: every model's accuracy and ECE per MNIST-C corruption and their
  mean, a row per model family.
* ``shift_<model>.png``: one model's calibration metrics and mean uncertainty per measure
  against angle, and its accuracy and ECE per corruption.
* ``reliability.png``: every model's reliability diagram on the clean test set and on MNIST-C
  pooled over corruptions (bins with at least 10 examples, averaged over runs), a column per
  model family;
  ``reliability_<model>.png``: one model's two diagrams, every non-empty bin, with the share
  of examples per bin.

Every model keeps one colour-and-marker pair in every figure
(:func:`robustbnn.report.styles.styles_for`); the family panels and their one legend come from
:func:`robustbnn.report.canvas.family_panels`; means over runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from robustbnn.report.canvas import family_legend, family_panels, plain_log_ticks, save_figure
from robustbnn.report.families import panel_groups
from robustbnn.report.shift_detail import shift_frame
from robustbnn.report.styles import styles_for
from robustbnn.results import names as n
from robustbnn.results.schema import with_knobs

__all__ = ["corruption_overview", "reliability_figure", "reliability_frame",
           "reliability_overview", "rotation_overview", "shift_figure"]

ROTATION_PANELS = ((n.ACCURACY, "accuracy"), (n.ECE, "ECE"), (n.NLL, "NLL (nats)"),
                   (n.BRIER, "Brier score"))
ENTROPY = "predictive_entropy"
LABELS = {n.ShiftKind.NONE: "clean test set",
          n.ShiftKind.CORRUPTED: "MNIST-C, all corruptions pooled"}


def _curve(rows: pd.DataFrame, metric: str, key: str, measure: str = "") -> pd.Series:
    """Mean over runs of ``metric`` (and ``measure``) by the level ``key``."""
    sel = rows[(rows["metric"] == metric) & (rows["measure"] == measure)]
    return sel.groupby(key, sort=False)["value"].mean()


def rotation_overview(results: pd.DataFrame, path: Path, *,
                      families: Mapping[str, str] | None = None) -> Path | None:
    """Accuracy, ECE, NLL, Brier score and mean predictive entropy against angle, every
    model: a row per metric, a column per model family (``families``, as
    :func:`robustbnn.report.families.model_families` gives them)."""
    rows = shift_frame(results, n.ShiftKind.ROTATED)
    if rows.empty:
        return None
    styles = styles_for(results["model"])
    groups = panel_groups(rows["model"], families)
    panels = [*ROTATION_PANELS, (n.MEAN_UNCERTAINTY, "mean pred. entropy (nats)")]
    fig, axes = family_panels(len(panels), groups, size=(3.4, 2.4))
    for i, (metric, label) in enumerate(panels):
        measure = ENTROPY if metric == n.MEAN_UNCERTAINTY else ""
        for ax, (group, members) in zip(axes[i], groups.items(), strict=True):
            for model in members:
                curve = _curve(rows[rows["model"] == model], metric, n.ANGLE, measure)
                curve = curve.sort_index()
                ax.plot(curve.index, curve.values, ms=4, label=model, **styles[model])
            ax.set_xticks(sorted(rows[n.ANGLE].unique())[::2])
            ax.grid(alpha=0.3)
            if i == 0:
                ax.set_title(group, fontsize=9)
        axes[i][0].set_ylabel(label)
    for ax in axes[-1]:
        ax.set_xlabel("rotation (degrees)")
    fig.suptitle("Rotated MNIST: calibration and uncertainty against the angle")
    family_legend(fig, groups, styles)
    return save_figure(fig, path)


def _corruption_axis(ax: plt.Axes, names: list[str]) -> None:
    ax.set_xticks(np.arange(len(names)), names, rotation=60, ha="right", fontsize=7)
    ax.grid(alpha=0.3, axis="y")


def corruption_overview(results: pd.DataFrame, path: Path, *,
                        families: Mapping[str, str] | None = None) -> Path | None:
    """Accuracy and ECE per MNIST-C corruption and their mean, every model (points): a row
    of panels per model family (``families``), the legend giving each model's means."""
    rows = shift_frame(results, n.ShiftKind.CORRUPTED)
    if rows.empty:
        return None
    names = list(dict.fromkeys(rows[n.CORRUPTION]))
    styles = styles_for(results["model"])
    groups = panel_groups(rows["model"], families)
    kinds = ((n.ACCURACY, "accuracy"), (n.ECE, "ECE"))
    fig, axes = family_panels(len(kinds), groups, by_row=True,
                              size=(max(4.5, 0.3 * len(names) + 1.5), 2.2))
    x = np.arange(len(names))
    means: dict[str, list[str]] = {}
    for i, (metric, label) in enumerate(kinds):
        for ax, (group, members) in zip(axes[i], groups.items(), strict=True):
            for model in members:
                curve = _curve(rows[rows["model"] == model], metric, n.CORRUPTION)
                curve = curve.reindex(names)
                style = styles[model]
                ax.plot(x, curve.values, ls="none", marker=style["marker"],
                        color=style["color"], ms=5, label=model)
                means.setdefault(model, []).append(f"{label} {np.nanmean(curve.values):.3f}")
            ax.set_ylabel(f"{group}\n{label}", fontsize=8)
            _corruption_axis(ax, names)
    fig.suptitle("MNIST-C: accuracy and ECE per corruption (legend: mean over corruptions)")
    family_legend(fig, groups, styles, ls="none", right=True,
                  labels={m: f"{m} ({', '.join(v)})" for m, v in means.items()})
    return save_figure(fig, path)


def shift_figure(results: pd.DataFrame, model: str, path: Path) -> Path | None:
    """One model: calibration metrics and mean uncertainty per measure against angle, and
    accuracy and ECE per corruption."""
    mine = results[results["model"] == model]
    rotated = shift_frame(mine, n.ShiftKind.ROTATED)
    corrupted = shift_frame(mine, n.ShiftKind.CORRUPTED)
    if rotated.empty and corrupted.empty:
        return None
    fig, axes = plt.subplots(1, 4, figsize=(21, 4.6))
    if len(rotated):
        pairs = (ROTATION_PANELS[:2], ROTATION_PANELS[2:])
        for ax, panel in zip(axes[:2], pairs, strict=True):
            for metric, label in panel:
                curve = _curve(rotated, metric, n.ANGLE).sort_index()
                ax.plot(curve.index, curve.values, marker="o", ms=3, label=label)
        unc = rotated[rotated["metric"] == n.MEAN_UNCERTAINTY]
        for measure, group in unc.groupby("measure", sort=True):
            curve = group.groupby(n.ANGLE)["value"].mean().sort_index()
            axes[2].plot(curve.index, curve.values, marker="o", ms=3, label=measure)
        titles = ("accuracy and ECE", "NLL and Brier score", "mean uncertainty")
        for ax, title in zip(axes[:3], titles, strict=True):
            ax.set_xlabel("rotation (degrees)")
            ax.set_xticks(sorted(rotated[n.ANGLE].unique())[::2])
            ax.set_title(f"{model}: rotated MNIST, {title}")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
    if len(corrupted):
        names = list(dict.fromkeys(corrupted[n.CORRUPTION]))
        x = np.arange(len(names))
        for offset, (metric, label) in zip((-0.2, 0.2), ((n.ACCURACY, "accuracy"),
                                                         (n.ECE, "ECE")), strict=True):
            curve = _curve(corrupted, metric, n.CORRUPTION).reindex(names)
            axes[3].bar(x + offset, curve.values, 0.4, label=label)
        _corruption_axis(axes[3], names)
        axes[3].set_title(f"{model}: MNIST-C")
        axes[3].legend(fontsize=7)
    fig.tight_layout()
    return save_figure(fig, path)


def reliability_frame(results: pd.DataFrame) -> pd.DataFrame:
    """Reliability bins, one row per (model, shift, bin) with the mean over runs of each bin's
    ``count``, ``confidence`` and ``accuracy`` (NaN where a bin is empty in every run)."""
    rows = results[results["task"] == n.RELIABILITY]
    if rows.empty:
        return pd.DataFrame(columns=["model", n.SHIFT, n.BIN, n.N_BINS, n.COUNT, n.CONFIDENCE,
                                     n.ACCURACY])
    rows = with_knobs(rows, n.SHIFT, n.BIN, n.N_BINS)
    table = rows.pivot_table(index=["model", n.SHIFT, n.BIN, n.N_BINS], columns="metric",
                             values="value", aggfunc="mean", sort=False)
    return table.reindex(columns=[n.COUNT, n.CONFIDENCE, n.ACCURACY]).reset_index()


OVERVIEW_MIN_COUNT = 10  # the all-model diagram leaves out bins this sparse (pure noise)


def _diagram(ax: plt.Axes, bins: pd.DataFrame, min_count: float = 1, **style: object) -> None:
    filled = bins[bins[n.COUNT] >= min_count].sort_values(n.BIN)
    ax.plot(filled[n.CONFIDENCE], filled[n.ACCURACY], **style)


def _square(ax: plt.Axes, title: str) -> None:
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls=":")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("confidence (mean max probability in the bin)")
    ax.set_ylabel("accuracy in the bin")
    ax.set_title(title)
    ax.grid(alpha=0.3)


def reliability_overview(results: pd.DataFrame, path: Path, *,
                         families: Mapping[str, str] | None = None) -> Path | None:
    """Every model's reliability diagram: a row of panels for the clean test set and one for
    MNIST-C pooled (when the run has it), a column per model family (``families``)."""
    table = reliability_frame(results)
    if table.empty:
        return None
    shifts = [s for s in (n.ShiftKind.NONE, n.ShiftKind.CORRUPTED) if (table[n.SHIFT] == s).any()]
    styles = styles_for(results["model"])
    groups = panel_groups(table["model"], families)
    fig, axes = family_panels(len(shifts), groups, size=(3.3, 3.3), sharey=True)
    for i, shift in enumerate(shifts):
        at = table[table[n.SHIFT] == shift]
        for j, (group, members) in enumerate(groups.items()):
            ax = axes[i][j]
            for model in members:
                bins = at[at["model"] == model]
                _diagram(ax, bins, OVERVIEW_MIN_COUNT, ms=4, lw=1, label=model, **styles[model])
            _square(ax, f"{group}: {LABELS[shift]}")
            ax.title.set_fontsize(8)
            if j:
                ax.set_ylabel("")
            ax.set_xlabel("" if i < len(shifts) - 1 else "confidence (mean max prob.)")
    fig.suptitle(f"Reliability diagrams (bins with ≥ {OVERVIEW_MIN_COUNT} examples)")
    family_legend(fig, groups, styles)
    return save_figure(fig, path)


def reliability_figure(results: pd.DataFrame, model: str, path: Path) -> Path | None:
    """One model's reliability diagrams (clean, MNIST-C pooled) over the share of examples in
    each bin."""
    table = reliability_frame(results[results["model"] == model])
    if table.empty:
        return None
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 7.5), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 1]})
    for shift, color in ((n.ShiftKind.NONE, "#1f77b4"), (n.ShiftKind.CORRUPTED, "#d62728")):
        bins = table[table[n.SHIFT] == shift]
        if bins.empty:
            continue
        _diagram(top, bins, marker="o", ms=4, color=color, label=LABELS[shift])
        width = 1.0 / bins[n.N_BINS].iloc[0]
        share = bins[n.COUNT] / bins[n.COUNT].sum()
        bottom.bar((bins[n.BIN] + 0.5) * width, share, width * 0.9, color=color, alpha=0.5,
                   label=LABELS[shift])
    _square(top, f"{model}: reliability diagram")
    top.set_xlabel("")
    top.legend(fontsize=8, loc="upper left")
    bottom.set_xlabel("confidence (max predictive probability)")
    bottom.set_ylabel("share of examples")
    bottom.set_yscale("log")
    plain_log_ticks(bottom.yaxis)
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    return save_figure(fig, path)
