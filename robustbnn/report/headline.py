"""The headline leaderboard: at most ten columns that answer "how robust is it, and does its
uncertainty notice OOD data?".

The model, its family, then clean accuracy and NLL, the honest robust accuracy (all-k PGD-EOT
at ε = 0.1, marked :data:`~robustbnn.report.leaderboard.UPPER_BOUND_MARK` where it is an upper
bound), detection-aware robust accuracy (adaptive attack), mean OOD AUROC and worst-case OOD
AUROC (each with its best measure named in the cell), accuracy under shift (the MNIST-C mean,
or the rotated-MNIST area for a run with rotation only) and the prediction cost
(:data:`HEADLINE`). A run without some of them (no robustness or shift cells) shows the ones
it has. Every other number is in an aspect table (:mod:`robustbnn.report.aspects`), and all of
them in ``all_columns.csv``. With several seeds, the legend says which differences on the sort
column exceed the seed spread (:mod:`robustbnn.report.separable`).
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from robustbnn.report.column import SANITY, Column
from robustbnn.report.leaderboard import UPPER_BOUND_MARK, Leaderboard
from robustbnn.report.ranking import ranking_legend
from robustbnn.report.separable import groups_legend
from robustbnn.results import names as n

__all__ = ["FAMILY", "HEADLINE", "MAX_COLUMNS", "SHIFT_FALLBACK", "headline",
           "headline_legend"]

# The headline's numbers, in display order (after the model and its family); a key the
# leaderboard lacks is left out.
HEADLINE = ("clean_accuracy", "clean_nll", "robust_accuracy_allk_eps0.1",
            "detection_aware_eps0.1", "ood_auroc_mean", "adv_ood_auroc_eps0.1",
            "corrupted_accuracy_mean", n.SECONDS_PER_1000_PREDICTIONS)
# Accuracy under shift when the run has no MNIST-C cells: rotated MNIST instead.
SHIFT_FALLBACK = {"corrupted_accuracy_mean": "rotated_accuracy_auc"}
MAX_COLUMNS = 10  # counting the model name
FAMILY = Column("family", "family", kind="text", aspect=SANITY)


def headline(board: Leaderboard, families: dict[str, str]) -> Leaderboard:
    """The headline of the full leaderboard ``board``, rows in its order.

    Args:
        board: The leaderboard of every column (:func:`robustbnn.report.leaderboard.leaderboard`).
        families: Model -> family (:func:`robustbnn.report.families.model_families`).

    Returns:
        The family column and the :data:`HEADLINE` columns ``board`` has, carrying their
        measure and bound companions (and the sort column, when it is not one of them).
    """
    keys = [SHIFT_FALLBACK[k] if k in SHIFT_FALLBACK and k not in board.table else k
            for k in HEADLINE]
    table = board.table.assign(**{FAMILY.key: pd.Series(
        [families.get(str(m), "other") for m in board.table.index], index=board.table.index,
        dtype=object)})
    full = dataclasses.replace(board, columns=[FAMILY, *board.columns], table=table)
    return full.select([FAMILY.key, *keys])


def headline_legend(board: Leaderboard) -> list[str]:
    """The headline's own legend items: which differences on the sort column exceed the seed
    spread (several runs, :func:`robustbnn.report.separable.groups_legend`), what the
    upper-bound mark means (when a shown column can carry it) and where the other numbers
    are."""
    items = []
    if board.ranking is not None:
        items.append(ranking_legend(board.ranking, title=board.column(board.sort).title))
    elif board.groups:
        items.append(groups_legend(board.groups, title=board.column(board.sort).title,
                                   seeds=board.seeds))
    sized = [c for c in board.columns if c.key in board.sizes]
    if sized:
        items.append("**n.** Each number's sample, which its interval covers: "
                     + "; ".join(f"{c.title}: {board.sizes[c.key]}" for c in sized)
                     + ". Each interval adds the test examples' error (a bootstrap) and, with "
                     "several runs, the seeds' (Student's t over the runs), and says how much of "
                     "it is the seeds' in `all_columns.json` (`interval.seed_share`). Numbers "
                     "without per-example values (the cost column) get the t interval of the "
                     "runs (none for one run).")
    bound = [c for c in board.columns if c.bound_key]
    if bound:
        items.append(f"**{UPPER_BOUND_MARK}** marks an upper bound: more posterior samples in "
                     "the attack's gradient still lowered that model's robust accuracy "
                     "(`eot_not_converged`) at the cap of adaptive EOT, so its true robust "
                     "accuracy may be lower. "
                     "`leaderboard.csv` and `.json` keep the number numeric and say so in the "
                     f"`{bound[0].bound_key}` field."
                     + (" A bound is not ranked as an estimate: "
                        + ", ".join(f"`{m}`" for m in board.unranked)
                        + (" follows" if len(board.unranked) == 1 else " follow")
                        + " the ranked models, in their own order, outside the groups "
                        "(`unranked` in `leaderboard.json`)." if board.unranked else ""))
    named = [c for c in board.columns if c.measure_key]
    if named:
        items.append(measure_legend(board))
    return items


def measure_legend(board: Leaderboard) -> str:
    """What a measure's name in parentheses means, and on which examples it was chosen."""
    named = [c for c in board.columns if c.measure_key]
    split = [c for c in named if "scoring half" in board.sizes.get(c.key, "")]
    text = ("A name in parentheses is the uncertainty measure behind the number; "
            "`leaderboard.csv` and `.json` carry it as its own field (`…_measure`). ")
    if split:
        where = (f" (in {', '.join(c.title for c in split)})" if len(split) < len(named)
                 else "")
        text += (f"It is chosen out of sample{where}: per model, the measure with the best value "
                 "on a fixed random half of the examples (the selection half: of the test "
                 "points, and of each OOD set's images, one split per test point, the same in "
                 "every run and for every model; a point's clean and adversarial copies in the "
                 "same half), and the number and its interval are those of the other half (the "
                 "scoring half), so the choice does not flatter it. A measure that is constant "
                 "for a model (BALD of a deterministic model) is never chosen: its AUROC is 1/2 "
                 "by ties alone. The candidates are every measure the run scored for the column,"
                 " the logit measures (`energy`, `max_logit` and their per-sample means) and "
                 "plug-in measures included; the protocol legend lists those of mean OOD AUROC.")
    else:
        text += ("It is the one with the best value for that model, chosen on the same data it "
                 "is scored on (these runs hold no per-example values), which flatters it.")
    return text
