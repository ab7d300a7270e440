"""The leaderboard: one row per model, a pure function of the results of one or more runs.

Several runs (e.g. seeds) combine as the mean and the sample standard deviation (ddof = 1)
over runs. The default order is clean accuracy, best first; any column can be the sort key,
in the direction :data:`robustbnn.report.schema.HIGHER_IS_BETTER` gives its metric.
"""

from __future__ import annotations

import dataclasses
import json
import math

import pandas as pd

from robustbnn.errors import ConfigError
from robustbnn.report.columns import Column, compute_columns
from robustbnn.report.markdown import md_table

__all__ = ["DEFAULT_SORT", "Leaderboard", "format_cell", "leaderboard", "tidy", "to_csv",
           "to_json", "to_markdown"]

DEFAULT_SORT = "clean_accuracy"


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
    """

    columns: list[Column]
    table: pd.DataFrame
    runs: int
    seeds: list[int]
    sort: str

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
    if "run" not in results:
        results = results.assign(run=0)
    columns, values = compute_columns(results)
    models = sorted(dict.fromkeys(results["model"]))
    table = pd.DataFrame(index=pd.Index(models, name="model"))
    runs = int(results["run"].nunique())
    for col in columns:
        series = values[col.key]
        if col.kind == "text":
            table[col.key] = series.reindex(models).fillna("")
            continue
        by_model = series.groupby(level="model")
        table[col.key] = by_model.mean().reindex(models)
        if runs > 1:
            table[f"{col.key}_std"] = by_model.std(ddof=1).reindex(models)
    sort = sort or DEFAULT_SORT
    keys = [c.key for c in columns]
    if sort not in keys:
        raise ConfigError(f"--sort {sort}: no such leaderboard column; known: {keys}")
    col = next(c for c in columns if c.key == sort)
    ascending = True if col.kind == "text" else not col.higher_is_better
    table = table.sort_values(sort, ascending=ascending, kind="mergesort", na_position="last")
    seeds = [int(s) for s in results.drop_duplicates("run").sort_values("run")["seed"]]
    return Leaderboard(columns, table, runs, seeds, sort)


def tidy(value: float) -> float:
    """``value`` at 10 significant digits, as ``results.csv`` shows it (no float noise).

    Example:
        >>> tidy(1 - 0.715)
        0.285
    """
    return float(f"{value:.10g}")


def _number(value: float, fmt: str) -> str:
    return f"{round(value):,}" if fmt == "d" else format(value, fmt)


def format_cell(board: Leaderboard, model: str, col: Column) -> str:
    """A cell as text: ``mean`` or ``mean ± std`` (several runs); ``–`` when missing."""
    value = board.table.at[model, col.key]
    if col.kind == "text":
        return str(value)
    if value is None or math.isnan(value):
        return "–"
    text = _number(value, col.fmt)
    std = board.table.at[model, f"{col.key}_std"] if board.runs > 1 else float("nan")
    if not math.isnan(std):
        text += f" ± {_number(std, col.fmt if col.fmt != 'd' else '.0f')}"
    return text


def to_markdown(board: Leaderboard, legend: list[str], *, title: str) -> str:
    """GitHub Markdown: the order, the table, and the protocol legend as a list."""
    header = ["model", *(c.title for c in board.columns)]
    right = [False, *(c.kind == "number" for c in board.columns)]
    rows = [[model, *(format_cell(board, model, c) for c in board.columns)]
            for model in board.table.index]
    spread = (f" Mean ± sample std over {board.runs} runs (seeds {board.seeds})."
              if board.runs > 1 else f" One run (seed {board.seeds[0]}).")
    return (f"# {title}\n\n{board.order_text()}{spread} Accuracies, AUROCs and success rates "
            "are fractions.\n\n" + md_table(header, rows, right) + "\n"
            + "".join(f"* {item}\n" for item in legend))


def _records(board: Leaderboard) -> list[dict]:
    keys = [(k, c) for c in board.columns
            for k in ([c.key, f"{c.key}_std"] if c.kind == "number" and board.runs > 1
                      else [c.key])]
    rows = []
    for model, row in board.table.iterrows():
        record: dict = {"model": model}
        for key, col in keys:
            value = row[key]
            if col.kind == "number":
                value = None if math.isnan(value) else tidy(float(value))
                if value is not None and col.fmt == "d" and key == col.key:
                    value = round(value)  # counts stay integers
            record[key] = value
        rows.append(record)
    return rows


def to_csv(board: Leaderboard) -> str:
    """CSV with numbers as numbers: ``model``, each column, and ``<key>_std`` for several runs."""
    frame = pd.DataFrame(_records(board))
    return frame.to_csv(index=False, float_format="%.10g", lineterminator="\n")


def to_json(board: Leaderboard, legend: list[str], *, title: str) -> str:
    """JSON: the columns (title, metric, direction), the order, the legend and the rows."""
    payload = {
        "title": title,
        "sort": board.sort,
        "order": board.order_text(),
        "runs": board.runs,
        "seeds": board.seeds,
        "columns": [{**dataclasses.asdict(c), "higher_is_better": c.higher_is_better}
                    for c in board.columns],
        "legend": legend,
        "rows": _records(board),
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
