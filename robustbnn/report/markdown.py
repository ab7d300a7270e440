"""GitHub Markdown tables, the one writer behind ``leaderboard.md``, ``ood.md`` and ``attack.md``.

Hand-written rather than tabulate's ``github`` format so that cells are not padded: a moved
number changes one line of a diff, not the widths of a whole column.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from robustbnn.report.escape import escape
from robustbnn.report.ranking import cell_interval
from robustbnn.results.schema import group_mean

# escape: re-exported
__all__ = ["MISSING", "NAN", "escape", "grid_table", "mean_std", "md_table", "with_run"]

# How a number that was not measured, and one that was measured as NaN, read in every report
# (Markdown, HTML, the terminal summary); the leaderboard legend says so.
MISSING = "–"
NAN = "NaN"


def with_run(results: pd.DataFrame) -> pd.DataFrame:
    """``results`` with a ``run`` column: as given, or all 0 (one run) when it has none.

    Every table of runs averages per ``run`` first; a single run's ``results.csv`` has no such
    column.
    """
    return results if "run" in results else results.assign(run=0)


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]],
             right: Sequence[bool] | None = None) -> str:
    """The table as lines ending in a newline; ``right[i]`` right-aligns column i.

    Every cell and header goes through :func:`robustbnn.report.escape.escape`, so a name from
    the data cannot break the table or add markup. By default the first column is
    left-aligned and the others (numbers) right-aligned.
    """
    if right is None:
        right = [False] + [True] * (len(header) - 1)

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(escape(str(c)) for c in cells) + " |"

    rule = "|" + "|".join("---:" if r else "---" for r in right) + "|"
    return "\n".join([line(header), rule, *(line(r) for r in rows)]) + "\n"


def mean_std(values: pd.Series, bounds: tuple[float, float] | None = None) -> str:
    """``mean [lo, hi]`` of per-run values with the 95% interval ``bounds``
    (:func:`robustbnn.report.ranking.cell_interval`) when it is known, else ``mean ± sample
    std`` (the mean alone for one run); :data:`MISSING` for none, :data:`NAN` when a value is
    NaN."""
    if values.empty:
        return MISSING
    if values.isna().any():
        return NAN
    text = f"{values.mean():.4f}"
    if bounds is not None and not any(math.isnan(b) for b in bounds) and bounds[0] != bounds[1]:
        return f"{text} [{bounds[0]:.3f}, {bounds[1]:.3f}]"
    std = values.std(ddof=1) if len(values) > 1 else float("nan")
    return text if math.isnan(std) else f"{text} ± {std:.4f}"


def _label(value: object) -> str:
    return f"{value:g}" if isinstance(value, int | float) and not isinstance(value, bool) \
        else str(value)


def grid_table(rows: pd.DataFrame, keys: list[str], title: str,
               by: tuple[str, ...] = ("model",), *, order: Sequence[tuple] | None = None,
               label: bool = True) -> str:
    """A detail table: rows = ``by`` values, one column per value combination of ``keys``.

    Each cell is :func:`mean_std` of the per-run means of ``rows`` (which need ``value`` and
    ``run`` columns), with its 95% interval where the rows have examples (column
    ``examples``, :func:`robustbnn.report.ranking.cell_interval`). Columns are sorted unless
    ``order`` gives them; a header reads ``key=value`` (numbers with ``:g``), or the value
    alone when ``label`` is False.
    """
    per_run = group_mean(rows, [*by, *keys, "run"]).reset_index()
    found = {tuple(r) for r in per_run[keys].itertuples(index=False)}
    combos = [c for c in order if c in found] if order is not None else sorted(found)

    def head(combo: tuple) -> str:
        if not label:
            return " ".join(_label(v) for v in combo)
        return " ".join(f"{k}={_label(v)}" for k, v in zip(keys, combo, strict=True))

    def cell(mine: pd.DataFrame, who: tuple, combo: tuple) -> str:
        values = mine[(mine[keys] == list(combo)).all(axis=1)]["value"]
        bounds = None
        if "examples" in rows and len(values):
            raw = rows[(rows[[*by, *keys]] == [*who, *combo]).all(axis=1)]
            bounds = cell_interval(raw)
        return mean_std(values, bounds)

    lines = []
    for who in dict.fromkeys(per_run[list(by)].itertuples(index=False, name=None)):
        mine = per_run[(per_run[list(by)] == list(who)).all(axis=1)]
        lines.append([*who, *(cell(mine, who, c) for c in combos)])
    right = [False] * len(by) + [True] * len(combos)
    return f"## {title}\n\n" + md_table([*by, *(head(c) for c in combos)], lines, right)
