"""The per-example OOD scores a ROC figure draws: one measure of one model on one OOD set.

A run keeps them twice: the score file ``scores/<model>/<set>.npz``
(:mod:`robustbnn.results.scores`), written from the ``clean`` and ``ood`` cells, holds the
measures those cells compute (the built-in ones and ``extra_measures``); the examples of the
set's ranking rows (:mod:`robustbnn.results.examples`) hold every measure's, a plug-in
measure's included, since a plug-in measure is scored in cells of its own (task ``measure``)
whose arrays never reach the score file. :func:`roc_scores` reads the score file, then the
rows' examples, so any measure a leaderboard names can be drawn; where neither holds the
measure (a run of an older robustbnn), it returns None, and :func:`missing` says why, for the
figure's log and legend.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from robustbnn.results import names as n
from robustbnn.results.scores import read_scores, scores_path

__all__ = ["missing", "roc_scores"]

logger = logging.getLogger(__name__)

EXAMPLES = "examples"  # the results' column of per-example parts (robustbnn.report.render)


def _from_examples(results: pd.DataFrame, model: str, dataset: str,
                   measure: str) -> tuple[np.ndarray, np.ndarray] | None:
    """``(is_ood, scores)`` from the examples of the measure's AUROC row in the first run."""
    if EXAMPLES not in results:
        return None
    rows = results[(results["model"] == model) & (results["task"] == n.OOD)
                   & (results["dataset"] == dataset) & (results["measure"] == measure)
                   & (results["metric"] == n.AUROC)]
    if "run" in rows and len(rows):
        rows = rows[rows["run"] == rows["run"].min()]  # the figures draw the first run
    for parts in rows[EXAMPLES]:
        if isinstance(parts, dict) and "score" in parts and "label" in parts:
            return np.asarray(parts["label"]).astype(np.int64), np.asarray(parts["score"])
    return None


def roc_scores(results: pd.DataFrame, run_dir: Path, model: str, dataset: str,
               measure: str) -> tuple[np.ndarray, np.ndarray] | None:
    """``(is_ood, scores)`` of ``measure`` for ``model`` on OOD set ``dataset``.

    Args:
        results: The results frame, with the rows' ``examples`` where the run kept them
            (:func:`robustbnn.report.render.with_examples`).
        run_dir: The run folder whose ``scores/`` the figures read (the first run).
        model: The model.
        dataset: The OOD set.
        measure: The uncertainty measure.

    Returns:
        The 0/1 OOD labels and the scores, one per example (in-distribution first in a score
        file), from the score file when it holds the measure, else from the examples of the
        measure's AUROC row; None when neither holds it.
    """
    file = scores_path(run_dir, model, dataset)
    if file.is_file():
        is_ood, scores = read_scores(file)
        if measure in scores:
            return is_ood, scores[measure]
    return _from_examples(results, model, dataset, measure)


def missing(model: str, dataset: str, measure: str) -> str:
    """Why a curve is not drawn, logged as a warning; returns the legend's short note."""
    logger.warning("no per-example scores of measure %r for %s on %s (neither its score file "
                   "nor its rows' examples hold them): its ROC curve is left out of the figures",
                   measure, model, dataset)
    return "no per-example scores, not drawn"
