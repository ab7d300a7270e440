"""The leaderboard: one row per model, a pure function of the results of one or more runs.

Several runs (e.g. seeds) combine as the mean and the sample standard deviation (ddof = 1)
over runs. The default order is clean accuracy, best first; any column can be the sort key,
in the direction :data:`robustbnn.results.schema.HIGHER_IS_BETTER` gives its metric.
"""

from __future__ import annotations

import dataclasses
import json
import math

import pandas as pd

from robustbnn.errors import ConfigError
from robustbnn.report.column import Column
from robustbnn.report.columns import compute_columns
from robustbnn.report.markdown import MISSING, NAN, md_table, with_run

__all__ = ["DEFAULT_SORT", "NAN_NOTE", "Leaderboard", "format_cell", "leaderboard", "tidy",
           "to_csv", "to_json", "to_markdown", "with_nan_note"]

DEFAULT_SORT = "clean_accuracy"
# The legend item of a leaderboard with a NaN cell: how NaN and "not measured" read apart.
NAN_NOTE = (f"**Empty cells.** {MISSING} = not measured (no such result for the model); {NAN} = "
            f"measured, but not a number. In `leaderboard.csv` the first is an empty field and "
            f"the second `{NAN}`; in `leaderboard.json` both are null, and a row's `nonfinite` "
            "object names each key whose value is `NaN`, `Infinity` or `-Infinity`.")


@dataclasses.dataclass(frozen=True)
class Leaderboard:
    """A rendered-ready leaderboard.

    Attributes:
        columns: The columns in display order (the model name comes first, implicitly).
        table: Index = model, in sort order; per numeric column ``key`` (the mean over runs)
            and, with several runs, ``key_std``; per text column its string.
        runs: How many runs were combined.
        seeds: The seeds of those runs, in order.
        sort: The key of the sort column.
        nan: The (model, key) cells that were measured and are NaN (a NaN in any run), as
            opposed to the NaN of a cell that was not measured at all.
    """

    columns: list[Column]
    table: pd.DataFrame
    runs: int
    seeds: list[int]
    sort: str
    nan: frozenset[tuple[str, str]] = frozenset()

    def column(self, key: str) -> Column:
        """The column with ``key``."""
        return next(c for c in self.columns if c.key == key)

    def order_text(self) -> str:
        """The sort order in words, for the headers."""
        col = self.column(self.sort)
        if col.kind == "text":
            return f"Sorted by {col.title} (A to Z)."
        better = "higher" if col.higher_is_better else "lower"
        return f"Sorted by {col.title} ({better} is better, best first)."


def leaderboard(results: pd.DataFrame, *, sort: str | None = None) -> Leaderboard:
    """The leaderboard of a results table.

    Args:
        results: Tidy results; an optional ``run`` column tells runs apart (default: one run).
        sort: Column key to sort by (default ``clean_accuracy``), best first.

    Returns:
        The leaderboard; ties keep the models in name order.

    Raises:
        ConfigError: If ``sort`` names no column of this leaderboard.
    """
    results = with_run(results)
    columns, values = compute_columns(results)
    models = sorted(dict.fromkeys(results["model"]))
    table = pd.DataFrame(index=pd.Index(models, name="model"))
    runs = int(results["run"].nunique())
    nan: set[tuple[str, str]] = set()
    for col in columns:
        series = values[col.key]
        if col.kind == "text":
            table[col.key] = series.reindex(models).fillna("")
            continue
        by_model = series.groupby(level="model")
        has_nan = series.isna().groupby(level="model").any()  # pandas would skip the NaN
        mean = by_model.mean().mask(has_nan)
        nan |= {(str(m), col.key) for m in mean.index[mean.isna()]}
        table[col.key] = mean.reindex(models)
        if runs > 1:
            table[f"{col.key}_std"] = by_model.std(ddof=1).mask(has_nan).reindex(models)
    sort = sort or DEFAULT_SORT
    keys = [c.key for c in columns]
    if sort not in keys:
        raise ConfigError(f"--sort {sort}: no such leaderboard column; known: {keys}")
    col = next(c for c in columns if c.key == sort)
    ascending = True if col.kind == "text" else not col.higher_is_better
    table = table.sort_values(sort, ascending=ascending, kind="mergesort", na_position="last")
    seeds = [int(s) for s in results.drop_duplicates("run").sort_values("run")["seed"]]
    return Leaderboard(columns, table, runs, seeds, sort, frozenset(nan))


def tidy(value: float) -> float:
    """``value`` at 10 significant digits, as ``results.csv`` shows it (no float noise).

    Example:
        >>> tidy(1 - 0.715)
        0.285
    """
    return float(f"{value:.10g}")


def _number(value: float, fmt: str) -> str:
    if not math.isfinite(value):
        return NAN if math.isnan(value) else format(value)  # "inf", "-inf"
    return f"{round(value):,}" if fmt == "d" else format(value, fmt)


def format_cell(board: Leaderboard, model: str, col: Column) -> str:
    """A cell as text: ``mean`` or ``mean ± std`` (several runs); ``–`` when not measured,
    ``NaN`` when measured as NaN (:data:`robustbnn.report.markdown.MISSING`, ``NAN``)."""
    value = board.table.at[model, col.key]
    if col.kind == "text":
        return str(value)
    if value is None or math.isnan(value):
        return NAN if (model, col.key) in board.nan else MISSING
    text = _number(value, col.fmt)
    std = board.table.at[model, f"{col.key}_std"] if board.runs > 1 else float("nan")
    if not math.isnan(std):
        text += f" ± {_number(std, col.fmt if col.fmt != 'd' else '.0f')}"
    return text


def with_nan_note(board: Leaderboard, legend: list[str]) -> list[str]:
    """``legend`` plus :data:`NAN_NOTE` when a cell of ``board`` was measured as NaN."""
    return [*legend, NAN_NOTE] if board.nan else legend


def to_markdown(board: Leaderboard, legend: list[str], *, title: str) -> str:
    """GitHub Markdown: the order, the table, and the protocol legend as a list."""
    legend = with_nan_note(board, legend)
    header = ["model", *(c.title for c in board.columns)]
    right = [False, *(c.kind == "number" for c in board.columns)]
    rows = [[model, *(format_cell(board, model, c) for c in board.columns)]
            for model in board.table.index]
    spread = (f" Mean ± sample std over {board.runs} runs (seeds {board.seeds})."
              if board.runs > 1 else f" One run (seed {board.seeds[0]}).")
    return (f"# {title}\n\n{board.order_text()}{spread} Accuracies, AUROCs and success rates "
            "are fractions.\n\n" + md_table(header, rows, right) + "\n"
            + "".join(f"* {item}\n" for item in legend))


# A value that is not a finite number, as leaderboard.csv writes it and as leaderboard.json's
# ``nonfinite`` marker of a row names it (the value itself is null there: strict JSON).
_NONFINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def _records(board: Leaderboard) -> tuple[list[dict], list[dict[str, str]]]:
    """Per model, the row's values (numbers, text, None when not measured, and None for a value
    that is not finite) and the keys whose value is not finite (``NaN``, ``Infinity``,
    ``-Infinity``)."""
    keys = [(k, c) for c in board.columns
            for k in ([c.key, f"{c.key}_std"] if c.kind == "number" and board.runs > 1
                      else [c.key])]
    rows, marks = [], []
    for model, row in board.table.iterrows():
        record: dict = {"model": model}
        mark: dict[str, str] = {}
        for key, col in keys:
            value = row[key]
            if col.kind == "number":
                value = float(value)
                measured_nan = (str(model), col.key) in board.nan
                if math.isnan(value) and not measured_nan:
                    value = None  # not measured (or the spread of a single run)
                elif not math.isfinite(value):
                    mark[key] = _NONFINITE[str(value)]
                    value = None
                else:
                    value = tidy(value)
                    if col.fmt == "d" and key == col.key:
                        value = round(value)  # counts stay integers
            record[key] = value
        rows.append(record)
        marks.append(mark)
    return rows, marks


def to_csv(board: Leaderboard) -> str:
    """CSV with numbers as numbers: ``model``, each column, and ``<key>_std`` for several runs.

    A cell not measured is empty; a value that is not finite reads ``NaN``, ``Infinity`` or
    ``-Infinity``.
    """
    rows, marks = _records(board)
    frame = pd.DataFrame([{**r, **m} for r, m in zip(rows, marks, strict=True)],
                         columns=list(rows[0]) if rows else None)
    return frame.to_csv(index=False, float_format="%.10g", lineterminator="\n")


def to_json(board: Leaderboard, legend: list[str], *, title: str) -> str:
    """Strict JSON: the columns (title, metric, direction), the order, the legend and the rows.

    A value not measured is null. A value that is not finite is null too, and the row's
    ``nonfinite`` object (present only then) maps its key to ``"NaN"``, ``"Infinity"`` or
    ``"-Infinity"``: JSON has no such numbers, and a reader must not take one for missing.
    """
    rows, marks = _records(board)
    legend = with_nan_note(board, legend)
    payload = {
        "title": title,
        "sort": board.sort,
        "order": board.order_text(),
        "runs": board.runs,
        "seeds": board.seeds,
        "columns": [{**dataclasses.asdict(c), "higher_is_better": c.higher_is_better}
                    for c in board.columns],
        "legend": legend,
        "rows": [{**r, "nonfinite": m} if m else r for r, m in zip(rows, marks, strict=True)],
    }
    return json.dumps(payload, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
