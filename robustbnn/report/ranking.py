"""Which models a column separates: intervals per model, and groups from paired tests.

:func:`column_intervals` gives every model's 95% interval on a column
(:mod:`robustbnn.report.intervals`: a bootstrap over test examples and runs where the rows
have examples, the t interval over runs otherwise). :func:`rank_models` decides the ties of
the sort column: walking the models best first, the leading model of what is left is compared
with each other one by a paired bootstrap on the same test points and runs, the p-values are
corrected by Holm's method for the number of comparisons, and every model whose adjusted
p-value is at least :data:`~robustbnn.report.intervals.ALPHA` joins the leader's group. The
first group is the best model and every model not separable from it; the leaderboard marks
those with :data:`~robustbnn.report.separable.SAME_MARK`.

Example:
    >>> import numpy as np, pandas as pd
    >>> from robustbnn.report.column import per_run
    >>> y = np.r_[np.ones(60), np.zeros(40)]
    >>> rows = pd.DataFrame({"model": ["a", "b"], "run": [0, 0], "seed": [0, 0],
    ...                      "metric": ["accuracy"] * 2, "value": [0.6, 0.6],
    ...                      "examples": [{"accuracy": y}, {"accuracy": y}]})
    >>> rank_models(["a", "b"], per_run(rows), higher=True).groups
    (('a', 'b'),)
"""

from __future__ import annotations

import dataclasses
import math
import statistics

import numpy as np
import pandas as pd

from robustbnn.report.column_samples import ColumnRows, carried, samples
from robustbnn.report.intervals import (
    ALPHA,
    CURVE_METRICS,
    Comparison,
    Sample,
    compare,
    holm,
    interval,
    min_detectable,
    point,
    seed_interval,
)
from robustbnn.results.schema import RANGES

__all__ = ["Ranking", "cell_interval", "column_intervals", "p_better_than_best", "rank_models",
           "ranking_json", "ranking_legend", "sample_size"]


@dataclasses.dataclass(frozen=True)
class Ranking:
    """The paired comparisons behind a column's groups.

    Attributes:
        groups: The models, best first, gathered behind each group's leader (see the module).
        versus: Per model after the best, its comparison with the best.
        adjusted: Per model after the best, the Holm-adjusted p-value against the best.
        p_better: Per model after the best, the probability that it beats the best in one run
            on a fresh test set (Bouthillier et al. 2021).
        min_detectable: The smallest difference from the best that the paired test detects
            with 80% power at this column's sample size (median standard error of the
            comparisons; at Holm's strictest step).
        size: The column's sample size in words.
    """

    groups: tuple[tuple[str, ...], ...]
    versus: dict[str, Comparison]
    adjusted: dict[str, float]
    p_better: dict[str, float]
    min_detectable: float
    size: str


def _column(series: pd.Series) -> tuple[ColumnRows | None, pd.Series]:
    """The column's carried rows, and its values without them (so that pandas operations on
    the values copy nothing)."""
    plain = pd.Series(series.to_numpy(), index=series.index)
    return carried(series), plain


def sample_size(sample: Sample, *, half: str = "") -> str:
    """A sample's size in words: its test points per run (a ranking's two classes apart), the
    number of rows averaged, and the runs.

    Example:
        >>> import numpy as np
        >>> from robustbnn.report.intervals import Component
        >>> c = Component("accuracy", {"accuracy": np.ones(100)})
        >>> sample_size([[c, c], [c, c]])
        'n = 100 test points, averaged over 2 rows, 2 runs'
    """
    comps = sample[0]
    strata = comps[0].strata()
    if len(strata) == 2:
        text = f"n = {len(strata[0][1])} in-distribution + {len(strata[1][1])} other points"
    else:
        text = f"n = {len(strata[0][1])} test points"
    if half:
        text += f" ({'the scoring' if half == 'score' else 'the ' + half} half)"
    if len(comps) > 1:
        text += f", averaged over {len(comps)} rows"
    return f"{text}, {len(sample)} run{'s' if len(sample) > 1 else ''}"


def column_intervals(series: pd.Series, metric: str = ""
                     ) -> tuple[dict[str, tuple[float, float]], str]:
    """Per model, the 95% interval of its run-averaged value on the column ``series`` (values
    by (model, run), its rows in ``attrs``: :func:`robustbnn.report.column.per_run`), and the
    column's sample size in words ("" without examples). A t interval over runs is cut to the
    range ``metric`` can take (:data:`robustbnn.results.schema.RANGES`)."""
    column, plain = _column(series)
    found = column.samples if column is not None else {}
    low, high = RANGES.get(metric, (-math.inf, math.inf))
    out: dict[str, tuple[float, float]] = {}
    for model, values in plain.groupby(level="model", sort=False):
        model = str(model)
        if model in found:
            out[model] = interval(column.distribution(model))
        else:
            lo, hi = seed_interval(values.to_numpy())
            out[model] = (max(lo, low), min(hi, high)) if not math.isnan(lo) else (lo, hi)
    size = ""
    if found:
        size = sample_size(next(iter(found.values())), half=column.half)
    return out, size


# Resamples of a detail-table cell: a report has thousands of them (ood.md alone about 4,000
# for the default suite), and their ends need less precision than the leaderboard's.
DETAIL_RESAMPLES = 1000


def cell_interval(rows: pd.DataFrame) -> tuple[float, float]:
    """The 95% interval of one detail-table cell: one model's rows of one setting (several
    rows per run are averaged, as the cell is). Over examples and runs where every row has
    examples (:data:`DETAIL_RESAMPLES` resamples), except for AUPR and FPR@95TPR, whose
    resampling costs a sort per resample: those, and rows without examples, get the t
    interval of the runs' values (NaN for one run)."""
    found = samples(rows) if not rows["metric"].isin(CURVE_METRICS).any() else {}
    if len(found) == 1:
        return interval(next(iter(found.values())), DETAIL_RESAMPLES)
    per_run = rows.groupby("run", sort=True)["value"].mean()
    return seed_interval(per_run.to_numpy())


def p_better_than_best(series: pd.Series, *, higher: bool) -> dict[str, float]:
    """Per model but the column's best, the probability that it beats the best in one run on
    a fresh test set (paired bootstrap, :func:`~robustbnn.report.intervals.compare`); empty
    when the best model's rows have no examples."""
    column, plain = _column(series)
    found = column.samples if column is not None else {}
    means = plain.groupby(level="model").mean().dropna()
    if means.empty:
        return {}
    best = str(means.idxmax() if higher else means.idxmin())
    if best not in found:
        return {}
    return {m: compare(column.distribution(m), column.distribution(best), higher=higher)
            .p_better for m in found if m != best and m in means}


def rank_models(order: list[str], series: pd.Series, *, higher: bool) -> Ranking | None:
    """The groups of the models in ``order`` (best first) on the column ``series``, from
    Holm-corrected paired bootstrap tests; None when the best model's rows have no examples.

    Models without examples, or with a NaN value, are left out of the groups.
    """
    column, plain = _column(series)
    found = column.samples if column is not None else {}
    means = plain.groupby(level="model").mean()
    todo = [m for m in order if m in found and pd.notna(means.get(m))]
    if not todo or todo[0] != order[0]:
        return None
    groups, versus, adjusted = [], {}, {}
    while todo:
        lead, rest = todo[0], todo[1:]
        comps = {m: _compare(column, m, lead, higher) for m in rest}
        adj = holm({m: c.p_value for m, c in comps.items()})
        if not groups:
            versus, adjusted = comps, adj
        group = [lead, *(m for m in rest if adj[m] >= ALPHA)]
        groups.append(tuple(group))
        todo = [m for m in rest if m not in group]
    ses = [c.se for c in versus.values() if c.se > 0]
    mdd = min_detectable(statistics.median(ses), tests=max(1, len(versus))) if ses else 0.0
    size = sample_size(found[order[0]], half=column.half)
    return Ranking(tuple(groups), versus, adjusted,
                   {m: c.p_better for m, c in versus.items()}, mdd, size)


def _compare(column: ColumnRows, model: str, lead: str, higher: bool) -> Comparison:
    """The paired comparison of ``model`` with ``lead``; its difference is that of their
    values on all examples."""
    found = column.samples
    result = compare(column.distribution(model), column.distribution(lead), higher=higher)
    difference = float(np.mean([np.mean([point(c) for c in comps]) for comps in found[model]])
                       - np.mean([np.mean([point(c) for c in comps]) for comps in found[lead]]))
    return dataclasses.replace(result, difference=difference)


def ranking_json(ranking: Ranking) -> dict:
    """The ranking for ``leaderboard.json``: groups, and per model its paired comparison with
    the best (difference, its interval, raw and Holm-adjusted p-value, P(beats the best))."""
    return {
        "test": "paired bootstrap over test examples and runs, Holm-corrected",
        "level": ALPHA, "size": ranking.size, "groups": [list(g) for g in ranking.groups],
        "min_detectable_difference": round(ranking.min_detectable, 6),
        "versus_best": {m: {"difference": round(c.difference, 6), "low": round(c.low, 6),
                            "high": round(c.high, 6), "p_value": round(c.p_value, 6),
                            "p_holm": round(ranking.adjusted[m], 6),
                            "p_better": round(c.p_better, 6)}
                        for m, c in ranking.versus.items()},
    }


def ranking_legend(ranking: Ranking, *, title: str, fmt: str = ".4f") -> str:
    """The legend item that says which models the sort column separates, at which level, and
    the smallest difference it could detect.

    Example:
        >>> r = Ranking((("a", "b"), ("c",)), {}, {}, {}, 0.081, "n = 100 test points, 3 runs")
        >>> ranking_legend(r, title="robust acc")[:56]
        '**Separable.** On robust acc (n = 100 test points, 3 run'
    """
    shown = "; ".join("{" + ", ".join(f"`{m}`" for m in group) + "}" for group in ranking.groups)
    best = ranking.groups[0][0]
    tied = len(ranking.groups[0]) - 1
    return (f"**Separable.** On {title} ({ranking.size}), ≈ marks a model that a paired test "
            f"does not separate from the best (`{best}`): a bootstrap of the difference over "
            "the same test points and runs, Holm-corrected over the comparisons at a "
            f"family-wise level of {ALPHA:g}; {tied} model{'s' if tied != 1 else ''} "
            f"{'are' if tied != 1 else 'is'} not separable from it. Groups, best first, each "
            f"its leader and the models not separable from it: {shown}. At this size the test "
            f"detects, with 80% power, a difference from the best of about "
            f"{format(ranking.min_detectable, fmt)} (smaller differences may be real but are "
            f"not resolved); `leaderboard.json` gives each comparison (`ranking`), and the "
            "aspect tables the probability that a model beats the best in one run on a fresh "
            "test set (P(beats best), Bouthillier et al. 2021).")
