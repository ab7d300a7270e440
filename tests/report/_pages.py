"""HTML pages built from synthetic results and tiny figures, for the HTML report's tests."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from robustbnn.report.html_page import HtmlPage
from robustbnn.report.leaderboard import Leaderboard, leaderboard
from robustbnn.results.paths import safe_name
from robustbnn.results.store import results_frame

from ._runs import rows

# Three families; a model name that ends another one's (dropout / mc_dropout) on purpose.
MODELS = {"mlp": "deterministic", "dropout": "deterministic", "mc_dropout": "MC dropout",
          "bbb": "variational"}


def aspect(board: Leaderboard, keys: list[str]) -> Leaderboard:
    """``board`` narrowed to the columns ``keys``, sorted by the first."""
    return dataclasses.replace(board, columns=[board.column(k) for k in keys], sort=keys[0])


def tiny_figure(path: Path, *, svg: bool = True) -> list[Path]:
    """A small matplotlib figure written as ``path`` (``.png``) and, with ``svg``, its twin."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(1.2, 0.8), dpi=40)
    fig.add_subplot().plot([0, 1, 2], [0.2, 0.9, 0.5], color="tab:red")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    written = [path]
    if svg:
        fig.savefig(path.with_suffix(".svg"), metadata={"Date": None})
        written.append(path.with_suffix(".svg"))
    return written


def page(folder: Path, models: dict[str, str] | None = None, *,
         figures: bool = True) -> HtmlPage:
    """A page of ``models`` (name -> family; default :data:`MODELS`) with accuracies falling in
    name order, two aspect tables, configs, training curves (none for the last model) and, with
    ``figures``, ``fgsm_accuracy`` (PNG + SVG), ``ood_roc.svg`` and ``attack_<model>`` each."""
    models = MODELS if models is None else models
    results = []
    for i, model in enumerate(models):
        results += rows(model, acc=0.95 - 0.01 * i, nll=0.1 + 0.37 * (i % 3), ood=0.9 - 0.02 * i)
    board = leaderboard(results_frame(results))
    keys = [c.key for c in board.columns]
    aspects = {"Attacks": aspect(board, [k for k in keys if "fgsm" in k or "target" in k][:6]),
               "OOD": aspect(board, [k for k in keys if "ood" in k][:4])}
    headline = aspect(board, ["clean_accuracy", *keys[1:6]])
    written: list[Path] = []
    if figures:
        written += tiny_figure(folder / "figures" / "fgsm_accuracy.png")
        roc = tiny_figure(folder / "figures" / "ood_roc.png")
        written += [p for p in roc if p.suffix == ".svg"]
        for model in models:
            written += tiny_figure(folder / "figures" / f"attack_{safe_name(model)}.png",
                                   svg=model != "mlp")
    entries = {m: {"config": {"hidden": [8, 8], "lr": 0.001, "activation": "gelu"},
                   "fit": {"seconds": 1.5, "val_accuracy": [0.5, 0.7 + i / 100, 0.8, 0.85]}}
               for i, m in enumerate(models)}
    entries[list(models)[-1]] = {"config": {"hidden": [4]}}  # no training curve
    return HtmlPage(title="robustbnn leaderboard", headline=headline, aspects=aspects,
                    legend=["**Clean.** accuracy of `S_eval` samples."], figures=written,
                    families=dict(models), models=entries, details=["ood.md", "attack.md"])
