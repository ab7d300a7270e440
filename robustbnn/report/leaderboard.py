"""The leaderboard: one row per model, a pure function of the results of one or more runs.

Several runs (e.g. seeds) combine as the mean and the sample standard deviation (ddof = 1)
over runs. The default order is the honest robust accuracy (:data:`DEFAULT_SORTS`: all-k
PGD-EOT accuracy at ε = 0.1), best first, or clean accuracy for a run without it; any column
can be the sort key, in the direction :data:`robustbnn.results.schema.HIGHER_IS_BETTER` gives
its metric. A :class:`Leaderboard` of every column is the full table (``all_columns.csv``);
:meth:`Leaderboard.select` gives the headline and the aspect tables, in the same order.
"""

from __future__ import annotations

import dataclasses
import json
import math

import pandas as pd

from robustbnn.errors import ConfigError
from robustbnn.report.column import Column
from robustbnn.report.columns import compute_columns
from robustbnn.report.faults import FAULTS, PARTIAL
from robustbnn.report.intervals import LEVEL
from robustbnn.report.markdown import MISSING, NAN, md_table, with_run
from robustbnn.report.ranking import (
    Ranking,
    column_intervals,
    p_better_than_best,
    rank_models,
    ranking_json,
)
from robustbnn.report.robust_columns import UPPER_BOUND
from robustbnn.report.separable import SAME_MARK, groups, seed_ranges
from robustbnn.results import names as n

__all__ = ["DEFAULT_SORT", "DEFAULT_SORTS", "NAN_NOTE", "UPPER_BOUND_MARK", "Leaderboard",
           "default_sort", "fault_note", "format_cell", "leaderboard", "spread_text", "tidy",
           "to_csv", "to_json", "to_markdown", "with_nan_note"]

DEFAULT_SORT = "clean_accuracy"
# The default sort key: the first of these the leaderboard has.
DEFAULT_SORTS = ("robust_accuracy_allk_eps0.1", DEFAULT_SORT)
# The mark of a number that is an upper bound, in a table that does not show its bound column.
UPPER_BOUND_MARK = "†"
# The legend item of a leaderboard with a NaN cell: how NaN and "not measured" read apart.
NAN_NOTE = (f"**Empty cells.** {MISSING} = not measured (no such result for the model); {NAN} = "
            f"measured, but not a number. In `leaderboard.csv` the first is an empty field and "
            f"the second `{NAN}`; in `leaderboard.json` both are null, and a row's `nonfinite` "
            "object names each key whose value is `NaN`, `Infinity` or `-Infinity`.")


def fault_note(board: Leaderboard) -> str:
    """The legend item of a leaderboard with a :data:`~robustbnn.report.faults.PARTIAL` cell:
    what it means, and per model the columns and the faulted cells behind them."""
    by_model: dict[str, list[str]] = {}
    for (model, key), where in sorted(board.faults.items()):
        by_model.setdefault(model, []).append(f"{board.column(key).title} ({where})")
    cells = "; ".join(f"`{m}`: {', '.join(items)}" for m, items in by_model.items())
    return (f"**{PARTIAL}** = not a number: the model returned NaN or inf logits (a numerical "
            "fault) in a cell this number is made of, so it is left out, in every run, rather "
            f"than shown as the mean of the other cells: {cells}. `leaderboard.csv` writes "
            f"`{PARTIAL}` in its place; `leaderboard.json` null, and the row's `{PARTIAL}` "
            "object names the faulted cells. A run with a fault is incomplete: `robustbnn "
            "bench` exits 1.")


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
        carried: Columns the table holds but Markdown and HTML do not show as columns of their
            own: the measure and bound companions of shown columns (shown inside their cells,
            :func:`format_cell`; CSV and JSON write them as fields beside their number) and
            the sort column when it is not shown (for :meth:`order_text` only).
        groups: With several runs, the models gathered by overlapping seed ranges of the sort
            column, best first (:func:`robustbnn.report.separable.groups`): the first group's
            models after the first are not separable from the best, and their sort-column cells
            carry :data:`~robustbnn.report.separable.SAME_MARK`. Empty for one run.

            Where the sort column has examples, the groups come from paired comparisons
            instead (:attr:`ranking`), for one run too.
        ranking: The paired comparisons of the sort column (:mod:`robustbnn.report.ranking`),
            or None when it has no examples (a run of an older robustbnn, a timing).
        sizes: Per numeric column key, its sample size in words (``"100 test points"``).
        seed_shares: Per numeric column key and model (with examples and several runs), the
            share of its interval's variance that comes from the seeds; the rest is the test
            examples'.
        unranked: The models whose sort-column value is an upper bound
            (:data:`~robustbnn.report.robust_columns.UPPER_BOUND`): they follow every other
            model, in their own sort order, and take no part in :attr:`groups` or
            :attr:`ranking`.
        faults: The (model, key) cells made of a cell with a numerical fault, and the faulted
            cells in words (:mod:`robustbnn.report.faults`): no number, in any run; every
            report shows :data:`~robustbnn.report.faults.PARTIAL` there.

    Per numeric column ``key`` the table also holds ``key_lo`` and ``key_hi``: the 95%
    interval of :mod:`robustbnn.report.intervals` (NaN where none can be given).
    """

    columns: list[Column]
    table: pd.DataFrame
    runs: int
    seeds: list[int]
    sort: str
    nan: frozenset[tuple[str, str]] = frozenset()
    carried: tuple[Column, ...] = ()
    groups: tuple[tuple[str, ...], ...] = ()
    ranking: Ranking | None = None
    sizes: dict[str, str] = dataclasses.field(default_factory=dict)
    seed_shares: dict[str, dict[str, float]] = dataclasses.field(default_factory=dict)
    unranked: tuple[str, ...] = ()
    faults: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)

    def column(self, key: str) -> Column:
        """The column with ``key`` (shown or carried)."""
        return next(c for c in (*self.columns, *self.carried) if c.key == key)

    def select(self, keys: list[str]) -> Leaderboard:
        """The leaderboard of the columns ``keys`` (those it has, in that order), rows in the
        same order; their measure and bound companions and the sort column come along as
        :attr:`carried`."""
        have = {c.key: c for c in (*self.columns, *self.carried)}
        shown = [have[k] for k in dict.fromkeys(keys) if k in have]
        names = {c.key for c in shown}
        extra = [k for c in shown for k in (c.measure_key, c.bound_key) if k]
        carried = [have[k] for k in dict.fromkeys([*extra, self.sort])
                   if k in have and k not in names]
        fields = [c.key for c in (*shown, *carried)]
        fields += [f"{k}{s}" for k in fields for s in ("_std", "_lo", "_hi")
                   if f"{k}{s}" in self.table]
        return dataclasses.replace(
            self, columns=shown, carried=tuple(carried), table=self.table[fields],
            nan=frozenset((m, k) for m, k in self.nan if k in fields),
            faults={(m, k): w for (m, k), w in self.faults.items() if k in fields})

    def order_text(self) -> str:
        """The sort order in words, for the headers."""
        col = self.column(self.sort)
        if col.kind == "text":
            return f"Sorted by {col.title} (A to Z)."
        better = "higher" if col.higher_is_better else "lower"
        return f"Sorted by {col.title} ({better} is better, best first)."


# What every interval covers, in the JSON's words (robustbnn.report.intervals.interval).
INTERVAL_COVERS = ("the test examples (a bootstrap, normal quantile) and the runs (their "
                   "standard error, Student's t with runs - 1 degrees of freedom), the two "
                   "half widths added in quadrature around the estimate; at least the Wilson "
                   "interval for a 0/1 metric; cut to the metric's range; the t interval over "
                   "runs for numbers without examples. seed_share: the seeds' share of the "
                   "variance, per column and model")


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
    index = pd.Index(models, name="model")
    fields: dict[str, pd.Series] = {}  # gathered, then one frame (no column-by-column inserts)
    runs = int(results["run"].nunique())
    nan: set[tuple[str, str]] = set()
    faults: dict[tuple[str, str], str] = {}
    sizes: dict[str, str] = {}
    seed_shares: dict[str, dict[str, float]] = {}
    for col in columns:
        series = values[col.key]
        if col.kind == "text":
            fields[col.key] = series.reindex(models).fillna("")
            continue
        faults |= {(str(m), col.key): w for m, w in series.attrs.get(FAULTS, {}).items()}
        by_model = series.groupby(level="model")
        has_nan = series.isna().groupby(level="model").any()  # pandas would skip the NaN
        mean = by_model.mean().mask(has_nan)
        nan |= {(str(m), col.key) for m in mean.index[mean.isna()]}
        fields[col.key] = mean.reindex(models)
        if runs > 1:
            fields[f"{col.key}_std"] = by_model.std(ddof=1).mask(has_nan).reindex(models)
        bounds, size, shares = column_intervals(series, col.metric)
        if shares:
            seed_shares[col.key] = shares
        for i, end in enumerate(("_lo", "_hi")):
            fields[f"{col.key}{end}"] = pd.Series({m: b[i] for m, b in bounds.items()},
                                                  dtype="float64").reindex(models)
        if size:
            sizes[col.key] = size
    table = pd.DataFrame({k: v.to_numpy() for k, v in fields.items()}, index=index)
    keys = [c.key for c in columns]
    sort = sort or default_sort(keys)
    if sort not in keys:
        raise ConfigError(f"--sort {sort}: no such leaderboard column; known: {keys}")
    col = next(c for c in columns if c.key == sort)
    ascending = True if col.kind == "text" else not col.higher_is_better
    table = table.sort_values(sort, ascending=ascending, kind="mergesort", na_position="last")
    table, unranked = _bounds_last(table, col)
    seeds = [int(s) for s in results.drop_duplicates("run").sort_values("run")["seed"]]
    order = [str(m) for m in table.index if m not in unranked]
    ranked = (rank_models(order, values[sort], higher=bool(col.higher_is_better))
              if col.kind == "number" else None)
    columns = _with_p_better(columns, values, table, sizes, sort, ranked)
    if ranked is not None:
        found = ranked.groups
    else:
        found = (groups(order, seed_ranges(values[sort]))
                 if runs > 1 and col.kind == "number" else ())
    return Leaderboard(columns, table, runs, seeds, sort, frozenset(nan), groups=found,
                       ranking=ranked, sizes=sizes, seed_shares=seed_shares,
                       unranked=unranked, faults=faults)


def _bounds_last(table: pd.DataFrame, col: Column) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """``table`` with the models whose sort value is an upper bound (``col``'s bound column
    says so) after every other model, each part in its sort order, and those models: a bound
    is not ranked as an estimate."""
    if not col.bound_key or col.bound_key not in table:
        return table, ()
    bound = table[col.bound_key] == UPPER_BOUND
    if not bound.any():
        return table, ()
    return (pd.concat([table[~bound], table[bound]]),
            tuple(str(m) for m in table.index[bound]))


def _with_p_better(columns: list[Column], values: dict[str, pd.Series], table: pd.DataFrame,
                   sizes: dict[str, str], sort: str, ranked: Ranking | None) -> list[Column]:
    """``columns`` with a column ``<key>_p_better`` after the sort column and after the first
    column of each aspect whose numbers have examples: per model, the probability that it
    beats that column's best model in one run on a fresh test set (Bouthillier et al. 2021;
    :func:`robustbnn.report.ranking.p_better_than_best`), filled into ``table``."""
    leads = {sort} if sort in sizes else set()
    for aspect in dict.fromkeys(c.aspect for c in columns):
        first = next((c for c in columns if c.aspect == aspect and c.kind == "number"
                      and c.key in sizes), None)
        if first is not None:
            leads.add(first.key)
    out = []
    for col in columns:
        out.append(col)
        if col.key not in leads:
            continue
        if col.key == sort and ranked is not None:
            chances = ranked.p_better
        else:
            chances = p_better_than_best(values[col.key], higher=bool(col.higher_is_better))
        if not chances:
            continue
        key = f"{col.key}_p_better"
        table[key] = pd.Series(chances, dtype="float64").reindex(table.index)
        out.append(Column(key, "P(beats best)", n.P_BETTER, fmt=".2f",
                          aspect=col.aspect))
    return out


def default_sort(keys: list[str]) -> str:
    """The default sort key among ``keys``: the first of :data:`DEFAULT_SORTS` present.

    Example:
        >>> default_sort(["clean_accuracy", "robust_accuracy_allk_eps0.1"])
        'robust_accuracy_allk_eps0.1'
        >>> default_sort(["clean_accuracy", "robust_accuracy_allk_eps0.3"])
        'clean_accuracy'
    """
    return next((k for k in DEFAULT_SORTS if k in keys), DEFAULT_SORT)


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


def _interval_format(fmt: str) -> str:
    """The format of an interval's ends: one decimal fewer than the number's (at least 2).

    Example:
        >>> _interval_format(".4f"), _interval_format(".3f"), _interval_format("d")
        ('.3f', '.2f', 'd')
    """
    if fmt.startswith(".") and fmt.endswith("f") and fmt[1:-1].isdigit():
        return f".{max(2, int(fmt[1:-1]) - 1)}f"
    return fmt


def format_cell(board: Leaderboard, model: str, col: Column) -> str:
    """A cell as text: ``mean [lo, hi]`` with its 95% interval, or ``mean ± std`` (several
    runs) where no interval can be given; ``–`` when not measured, ``NaN`` when measured as
    NaN (:data:`robustbnn.report.markdown.MISSING`, ``NAN``), ``partial`` when made of a cell
    with a numerical fault (:data:`robustbnn.report.faults.PARTIAL`).

    Where ``board`` carries, but does not show, the column naming the measure behind the
    number or saying it is an upper bound, the cell says so itself: ``0.9632 (bald)``, and
    ``0.1900†`` (:data:`UPPER_BOUND_MARK`) for an upper bound. With several runs, a cell of
    the sort column whose seed range overlaps the best model's ends in
    :data:`~robustbnn.report.separable.SAME_MARK` (:attr:`Leaderboard.groups`).
    """
    value = board.table.at[model, col.key]
    if col.kind == "text":
        return str(value)
    if (model, col.key) in board.faults:
        return PARTIAL
    if value is None or math.isnan(value):
        return NAN if (model, col.key) in board.nan else MISSING
    text = _number(value, col.fmt)
    lo, hi = (board.table.at[model, f"{col.key}{s}"] if f"{col.key}{s}" in board.table
              else math.nan for s in ("_lo", "_hi"))
    std = (board.table.at[model, f"{col.key}_std"]
           if board.runs > 1 and f"{col.key}_std" in board.table else float("nan"))
    if not (math.isnan(lo) or math.isnan(hi)) and lo != hi:
        short = _interval_format(col.fmt)
        text += f" [{_number(lo, short)}, {_number(hi, short)}]"
    elif not math.isnan(std):
        text += f" ± {_number(std, col.fmt if col.fmt != 'd' else '.0f')}"
    carried = {c.key for c in board.carried}
    if col.bound_key in carried and board.table.at[model, col.bound_key] == UPPER_BOUND:
        text += UPPER_BOUND_MARK
    if col.measure_key in carried and board.table.at[model, col.measure_key]:
        text += f" ({board.table.at[model, col.measure_key]})"
    if col.key == board.sort and board.groups and model in board.groups[0][1:]:
        text += f" {SAME_MARK}"
    return text


def with_nan_note(board: Leaderboard, legend: list[str]) -> list[str]:
    """``legend`` plus :data:`NAN_NOTE` when a cell of ``board`` was measured as NaN, and
    :func:`fault_note` when a cell is partial."""
    legend = [*legend, NAN_NOTE] if board.nan else legend
    return [*legend, fault_note(board)] if board.faults else legend


def spread_text(board: Leaderboard) -> str:
    """What a cell's numbers are: the mean of which runs, and what its interval covers."""
    if board.runs > 1:
        return (f" Mean over {board.runs} runs (seeds {board.seeds}), with its 95% interval "
                "[low, high] over the test examples and the runs (the t interval of the runs "
                "for numbers not computed from test examples).")
    return (f" One run (seed {board.seeds[0]}), with its 95% interval [low, high] over the "
            "test examples.")


def to_markdown(board: Leaderboard, legend: list[str], *, title: str,
                after_table: str = "") -> str:
    """GitHub Markdown: the order, the table, ``after_table`` (Markdown, e.g. links to other
    tables) and the protocol legend as a list."""
    legend = with_nan_note(board, legend)
    header = ["model", *(c.title for c in board.columns)]
    right = [False, *(c.kind == "number" for c in board.columns)]
    rows = [[model, *(format_cell(board, model, c) for c in board.columns)]
            for model in board.table.index]
    spread = spread_text(board)
    return (f"# {title}\n\n{board.order_text()}{spread} Accuracies, AUROCs and success rates "
            "are fractions.\n\n" + md_table(header, rows, right) + "\n" + after_table
            + "".join(f"* {item}\n" for item in legend))


# A value that is not a finite number, as leaderboard.csv writes it and as leaderboard.json's
# ``nonfinite`` marker of a row names it (the value itself is null there: strict JSON).
_NONFINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def _records(board: Leaderboard
             ) -> tuple[list[dict], list[dict[str, str]], list[dict[str, str]]]:
    """Per model, the row's values (numbers, text, None when not measured, and None for a value
    that is not finite or partial), the keys whose value is not finite (``NaN``,
    ``Infinity``, ``-Infinity``) and the partial keys with their faulted cells in words."""
    carried = {c.key: c for c in board.carried}
    # Each shown column, then its carried companions beside it.
    order = [c for col in board.columns
             for c in (col, *(carried[k] for k in (col.measure_key, col.bound_key)
                              if k in carried))]
    keys = [(k, c) for c in order
            for k in ([c.key, *(f"{c.key}{s}" for s in ("_std", "_lo", "_hi")
                                if f"{c.key}{s}" in board.table)]
                      if c.kind == "number" else [c.key])]
    rows, marks, partial = [], [], []
    for model, row in board.table.iterrows():
        record: dict = {"model": model}
        mark: dict[str, str] = {}
        faults = {c.key: w for c in board.columns
                  if (w := board.faults.get((str(model), c.key))) is not None}
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
        partial.append(faults)
    return rows, marks, partial


def to_csv(board: Leaderboard) -> str:
    """CSV with numbers as numbers: ``model``, each column, and ``<key>_std`` for several runs.

    A cell not measured is empty; a value that is not finite reads ``NaN``, ``Infinity`` or
    ``-Infinity``; a value made of a cell with a numerical fault reads ``partial``
    (:data:`~robustbnn.report.faults.PARTIAL`).
    """
    rows, marks, partial = _records(board)
    frame = pd.DataFrame([{**r, **m, **dict.fromkeys(p, PARTIAL)}
                          for r, m, p in zip(rows, marks, partial, strict=True)],
                         columns=list(rows[0]) if rows else None)
    return frame.to_csv(index=False, float_format="%.10g", lineterminator="\n")


def to_json(board: Leaderboard, legend: list[str], *, title: str) -> str:
    """Strict JSON: the columns (title, metric, direction), the order, the legend and the rows.

    The companions a table carries without showing them as columns (the measure and bound of
    a shown column, :attr:`Leaderboard.carried`) are listed under ``carried`` (present only
    then); the rows hold their values too.

    A value not measured is null. A value that is not finite is null too, and the row's
    ``nonfinite`` object (present only then) maps its key to ``"NaN"``, ``"Infinity"`` or
    ``"-Infinity"``: JSON has no such numbers, and a reader must not take one for missing. A
    value made of a cell with a numerical fault is null too, and the row's ``partial`` object
    (present only then) maps its key to the faulted cells (``"numerical fault: ood on
    uniform"``).

    With several runs, ``seed_groups`` (present only then) lists the models gathered by
    overlapping seed ranges of the sort column, best first (:attr:`Leaderboard.groups`).
    ``unranked`` (present only then) lists the models whose sort value is an upper bound
    (:attr:`Leaderboard.unranked`).
    """
    rows, marks, partial = _records(board)
    legend = with_nan_note(board, legend)
    named = {k for c in board.columns for k in (c.measure_key, c.bound_key)}
    companions = [c for c in board.carried if c.key in named]
    payload = {
        "title": title,
        "sort": board.sort,
        "order": board.order_text(),
        "runs": board.runs,
        "seeds": board.seeds,
        "columns": [{**dataclasses.asdict(c), "higher_is_better": c.higher_is_better}
                    for c in board.columns],
        **({"carried": [{**dataclasses.asdict(c), "higher_is_better": c.higher_is_better}
                        for c in companions]} if companions else {}),
        "legend": legend,
        "interval": {"level": LEVEL, "fields": "<key>_lo, <key>_hi",
                     "covers": INTERVAL_COVERS,
                     "sizes": {c.key: board.sizes[c.key] for c in board.columns
                               if c.key in board.sizes},
                     **({"seed_share": {c.key: {m: round(v, 4) for m, v in
                                                board.seed_shares[c.key].items()}
                                        for c in board.columns if c.key in board.seed_shares}}
                        if board.seed_shares else {})},
        **({"seed_groups": [list(g) for g in board.groups]} if board.groups else {}),
        **({"ranking": ranking_json(board.ranking)} if board.ranking else {}),
        **({"unranked": list(board.unranked)} if board.unranked else {}),
        "rows": [{**r, **({"nonfinite": m} if m else {}),
                  **({PARTIAL: {k: f"numerical fault: {w}" for k, w in p.items()}} if p else {})}
                 for r, m, p in zip(rows, marks, partial, strict=True)],
    }
    return json.dumps(payload, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
