"""How many seeds a column needs before its leader separates from the rest of its top group.

Where a column's interval is mostly the seeds' (mean and worst-case OOD AUROC on the default
board: :attr:`~robustbnn.report.intervals.Spread.seed_share`), more test points narrow nothing;
more runs do. For each model of the may-be-best set (:mod:`robustbnn.report.best_set`) after
the leader, this finds the fewest runs at which the all-pairs test would separate the two,
assuming the measured difference and the measured spreads hold: the examples' standard error
of the difference stays (the runs score the same test points), the seeds' per-run standard
deviation stays and its standard error falls as 1/sqrt(runs), and the seeds' critical value is
Tukey's with ``k (runs - 1)`` degrees of freedom, as :func:`~robustbnn.report.best_set.best_set`
computes it. Where the examples' part alone reaches the difference, no number of seeds
separates them: that takes more test points.

Run it on the runs of a board (the committed per-example data of ``reports/default``)::

    python -m robustbnn.report.seeds_needed reports/default/data/seed0 \\
        reports/default/data/seed1 reports/default/data/seed2

It prints, per column, each top-group model's difference from the leader, the two standard
errors and the runs needed.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from collections.abc import Sequence
from pathlib import Path

from robustbnn.errors import UserError
from robustbnn.report.best_set import PairTest, tukey_critical

__all__ = ["COLUMNS", "MAX_RUNS", "Needed", "main", "runs_to_separate", "seeds_needed"]

# The default board's columns whose intervals the seeds dominate.
COLUMNS = ("ood_auroc_mean", "adv_ood_auroc_eps0.1")
MAX_RUNS = 100  # the search's end: "more than this" reads as "not by seeds"


def runs_to_separate(test: PairTest, *, runs: int, models: int, c_examples: float,
                     up_to: int = MAX_RUNS) -> int | None:
    """The fewest runs (at least ``runs``) at which ``test``'s pair would be separated, its
    difference and spreads as measured on ``runs`` runs among ``models`` models; None when the
    examples' part alone is as large as the difference, or more than ``up_to`` runs.

    Example:
        >>> t = PairTest(difference=0.05, se_examples=0.005, se_seeds=0.03, margin=0.2)
        >>> runs_to_separate(t, runs=3, models=17, c_examples=3.5)
        16
        >>> runs_to_separate(PairTest(0.01, 0.005, 0.03, 0.2), runs=3, models=17,
        ...                  c_examples=3.5) is None
        True
    """
    gap = abs(test.difference)
    examples = c_examples * test.se_examples
    if examples >= gap:
        return None
    per_run = test.se_seeds * math.sqrt(runs)
    for r in range(max(runs, 2), up_to + 1):
        margin = math.hypot(examples, tukey_critical(models, models * (r - 1))
                            * per_run / math.sqrt(r))
        if gap > margin:
            return r
    return None


@dataclasses.dataclass(frozen=True)
class Needed:
    """One top-group model's distance from separation.

    Attributes:
        model: The model.
        difference: The leader's value minus the model's (in the better direction).
        se_examples: The difference's standard error from the test examples.
        se_seeds: Its standard error from the runs, at the measured number of runs.
        runs: The fewest runs that separate it from the leader (None: not by seeds).
    """

    model: str
    difference: float
    se_examples: float
    se_seeds: float
    runs: int | None


def seeds_needed(results: object, column: str) -> tuple[str, list[Needed]]:
    """The leader of ``column`` and, per other model of its may-be-best set, the runs that
    would separate them (:func:`runs_to_separate`).

    Args:
        results: Tidy results of several runs (:func:`robustbnn.report.render.load_runs`).
        column: A numeric leaderboard column with per-example values.

    Raises:
        UserError: When the column has no paired test (no such column, or no examples).
    """
    from robustbnn.report.leaderboard import leaderboard

    board = leaderboard(results, sort=column)
    ranking = board.ranking
    if ranking is None or ranking.best is None:
        raise UserError(f"{column}: no all-pairs test (a column without per-example values, "
                        "or one model); pass a numeric column whose rows keep examples")
    found = ranking.best
    lead, *rest = ranking.groups[0]
    models = len({m for group in found.groups for m in group})
    out = []
    for model in rest:
        test = found.pairs.get((lead, model)) or found.pairs[(model, lead)]
        out.append(Needed(model, abs(test.difference), test.se_examples, test.se_seeds,
                          runs_to_separate(test, runs=board.runs, models=models,
                                           c_examples=found.c_examples)))
    return lead, out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m robustbnn.report.seeds_needed RUN RUN ... [--column KEY ...]``."""
    parser = argparse.ArgumentParser(
        prog="python -m robustbnn.report.seeds_needed",
        description="How many seeds each seed-dominated column needs before its leader "
                    "separates from the rest of its top group.")
    parser.add_argument("runs", nargs="+", type=Path, help="run folders (seeds of one suite)")
    parser.add_argument("--column", action="append", default=None,
                        help=f"leaderboard column key (repeatable; default: {', '.join(COLUMNS)})")
    args = parser.parse_args(argv)
    from robustbnn.report.render import load_runs

    try:
        results, _ = load_runs(args.runs)
        lines = []
        for column in args.column or COLUMNS:
            lead, needed = seeds_needed(results, column)
            lines += [f"{column}: leader {lead}, {len(args.runs)} runs",
                      "| model | difference | se (examples) | se (seeds) | runs to separate |",
                      "|---|---:|---:|---:|---:|"]
            for n in needed:
                runs = "not by seeds" if n.runs is None else str(n.runs)
                lines.append(f"| {n.model} | {n.difference:.4f} | {n.se_examples:.4f} | "
                             f"{n.se_seeds:.4f} | {runs} |")
    except UserError as err:
        sys.stderr.write(f"seeds_needed: error: {err}\n")
        return 2
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
