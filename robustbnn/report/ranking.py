"""Which models a column separates: intervals per model, and the set that may be the best.

:func:`column_intervals` gives every model's 95% interval on a column
(:func:`robustbnn.report.intervals.interval`: the test examples and the runs, a t-type
interval, where the rows have examples; the t interval over runs otherwise). :func:`rank_models`
decides the ties of the sort column with :func:`robustbnn.report.best_set.best_set`: every
pair of models tested at once at family-wise level
:data:`~robustbnn.report.intervals.ALPHA`, the best not fixed in advance. The first group is
the set of models that no other model beats (the models that may be the best); the
leaderboard marks its members after the leader with :data:`~robustbnn.report.separable.SAME_MARK`.

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

import pandas as pd

from robustbnn.report.best_set import BestSet, best_set
from robustbnn.report.column_samples import ColumnRows, carried, samples
from robustbnn.report.intervals import (
    ALPHA,
    CURVE_METRICS,
    Comparison,
    Sample,
    compare,
    interval,
    run_points,
    seed_interval,
    spread,
)
from robustbnn.results.schema import RANGES

__all__ = ["Ranking", "cell_interval", "column_intervals", "p_better_than_best", "rank_models",
           "ranking_json", "ranking_legend", "sample_size"]


@dataclasses.dataclass(frozen=True)
class Ranking:
    """The decisions behind a column's groups.

    Attributes:
        groups: The models in tiers, each best first: the first is the set of models that may
            be the best (no other model beats them at the family-wise level), each next one
            the models that no model left beats (:class:`~robustbnn.report.best_set.BestSet`).
        versus: Per model after the best, its paired comparison with the best (difference,
            its 95% bootstrap interval, the raw two-sided p-value).
        best: The all-pairs test behind the groups.
        p_better: Per model after the best, the probability that it beats the best in one run
            on a fresh test set (Bouthillier et al. 2021).
        min_detectable: The difference from the best that the test detects with 80% power at
            this column's sample size (:attr:`~robustbnn.report.best_set.BestSet.min_detectable`).
        size: The column's sample size in words.
    """

    groups: tuple[tuple[str, ...], ...]
    versus: dict[str, Comparison]
    best: BestSet | None
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
                     ) -> tuple[dict[str, tuple[float, float]], str, dict[str, float]]:
    """Per model, the 95% interval of its run-averaged value on the column ``series`` (values
    by (model, run), its rows in ``attrs``: :func:`robustbnn.report.column.per_run`), the
    column's sample size in words ("" without examples), and per model with examples and
    several runs the share of its interval's variance that comes from the seeds
    (:attr:`~robustbnn.report.intervals.Spread.seed_share`). Every interval is cut to the range
    ``metric`` can take (:data:`robustbnn.results.schema.RANGES`)."""
    column, plain = _column(series)
    found = column.samples if column is not None else {}
    out: dict[str, tuple[float, float]] = {}
    shares: dict[str, float] = {}
    for model, values in plain.groupby(level="model", sort=False):
        model = str(model)
        if model in found:
            found_spread = spread(found[model], dist=column.distribution(model))
            out[model] = found_spread.bounds(metric)
            share = found_spread.seed_share
            if not math.isnan(share):
                shares[model] = share
        else:
            out[model] = _cut(seed_interval(values.to_numpy()), metric)
    size = ""
    if found:
        size = sample_size(next(iter(found.values())), half=column.half)
    return out, size, shares


def _cut(bounds: tuple[float, float], metric: str) -> tuple[float, float]:
    """``bounds`` cut to the range ``metric`` can take (NaN stays NaN)."""
    lo, hi = bounds
    if math.isnan(lo):
        return lo, hi
    low, high = RANGES.get(metric, (-math.inf, math.inf))
    return max(lo, low), min(hi, high)


# Resamples of a detail-table cell: a report has thousands of them (ood.md alone about 4,000
# for the default suite), and their ends need less precision than the leaderboard's.
DETAIL_RESAMPLES = 1000


def cell_interval(rows: pd.DataFrame) -> tuple[float, float]:
    """The 95% interval of one detail-table cell: one model's rows of one setting (several
    rows per run are averaged, as the cell is). Over examples and runs where every row has
    examples (:data:`DETAIL_RESAMPLES` resamples), except for AUPR and FPR@95TPR, whose
    resampling costs a sort per resample: those, and rows without examples, get the t
    interval of the runs' values (NaN for one run); every one cut to the metric's range."""
    metrics = rows["metric"].unique()
    metric = str(metrics[0]) if len(metrics) == 1 else ""
    found = samples(rows) if not rows["metric"].isin(CURVE_METRICS).any() else {}
    if len(found) == 1:
        return interval(next(iter(found.values())), DETAIL_RESAMPLES, metric=metric)
    per_run = rows.groupby("run", sort=True)["value"].mean()
    return _cut(seed_interval(per_run.to_numpy()), metric)


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
    """The groups of the models in ``order`` (best first) on the column ``series``, from the
    all-pairs test of :func:`~robustbnn.report.best_set.best_set`; None when the best model's
    rows have no examples.

    Models without examples, or with a NaN value, are left out of the groups.
    """
    column, plain = _column(series)
    found = column.samples if column is not None else {}
    means = plain.groupby(level="model").mean()
    todo = [m for m in order if m in found and pd.notna(means.get(m))]
    if not todo or todo[0] != order[0]:
        return None
    lead = todo[0]
    versus = {m: _compare(column, m, lead, higher) for m in todo[1:]}
    size = sample_size(found[lead], half=column.half)
    if len(todo) < 2:
        return Ranking(((lead,),), versus, None, {}, 0.0, size)
    points = {m: run_points(found[m]) for m in todo}
    strata = found[lead][0][0].strata()
    found_best = best_set({m: column.distribution(m) for m in todo}, points, higher=higher,
                          examples=min(len(pos) for _, pos in strata))
    rank = {m: i for i, m in enumerate(todo)}  # the table's order within each tier
    groups = tuple(tuple(sorted(g, key=rank.__getitem__)) for g in found_best.groups)
    if groups[0][0] != lead:  # a tie in the estimates: the table's leader leads
        first = tuple(sorted({*groups[0], lead}, key=rank.__getitem__))
        groups = (first, *(tuple(m for m in g if m != lead) for g in groups[1:]))
        groups = tuple(g for g in groups if g)
    return Ranking(groups, versus, found_best, {m: c.p_better for m, c in versus.items()},
                   found_best.min_detectable, size)


def _compare(column: ColumnRows, model: str, lead: str, higher: bool) -> Comparison:
    """The paired comparison of ``model`` with ``lead``; its difference is that of their
    values on all examples."""
    found = column.samples
    result = compare(column.distribution(model), column.distribution(lead), higher=higher)
    difference = float(run_points(found[model]).mean() - run_points(found[lead]).mean())
    return dataclasses.replace(result, difference=difference)


TEST_NAME = ("all pairs at once (max-T bootstrap over the test examples, Tukey's studentized "
             "range over the runs), family-wise; the best not fixed in advance")


def ranking_json(ranking: Ranking) -> dict:
    """The ranking for ``leaderboard.json``: the groups, the all-pairs test's critical values,
    every separated pair (winner, loser), and per model its comparison with the best
    (difference, its 95% bootstrap interval, raw p-value, whether the all-pairs test separates
    them, the simultaneous margin, the seeds' share of the difference's variance, P(beats the
    best))."""
    found = ranking.best
    pairs = found.pairs if found is not None else {}
    lead = ranking.groups[0][0]

    def pair(m: str) -> dict:
        test = pairs.get((lead, m)) or pairs.get((m, lead))
        if test is None:
            return {}
        return {"separated": test.separated, "margin": round(test.margin, 6),
                "seed_share": round(test.seed_share, 6)}

    return {
        "test": TEST_NAME, "level": ALPHA, "size": ranking.size,
        "groups": [list(g) for g in ranking.groups],
        "min_detectable_difference": round(ranking.min_detectable, 6),
        **({"critical_examples": round(found.c_examples, 6),
            "critical_seeds": (None if math.isnan(found.c_seeds)
                               else round(found.c_seeds, 6)),
            "separated_pairs": [list(p) for p in found.beats()]} if found is not None else {}),
        "versus_best": {m: {"difference": round(c.difference, 6), "low": round(c.low, 6),
                            "high": round(c.high, 6), "p_value": round(c.p_value, 6),
                            **pair(m), "p_better": round(c.p_better, 6)}
                        for m, c in ranking.versus.items()},
    }


def ranking_legend(ranking: Ranking, *, title: str, fmt: str = ".4f") -> str:
    """The legend item that says which models may be the best on the sort column, by which
    procedure, and the smallest difference it could detect.

    Example:
        >>> r = Ranking((("a", "b"), ("c",)), {}, None, {}, 0.081, "n = 100 test points, 3 runs")
        >>> ranking_legend(r, title="robust acc")[:56]
        '**Separable.** On robust acc (n = 100 test points, 3 run'
    """
    shown = "; ".join("{" + ", ".join(f"`{m}`" for m in group) + "}" for group in ranking.groups)
    best = ranking.groups[0][0]
    tied = len(ranking.groups[0]) - 1
    return (f"**Separable.** On {title} ({ranking.size}), ≈ marks a model that may be the "
            f"best: no other model beats it when every pair is tested at once at a "
            f"family-wise level of {ALPHA:g}, the best not fixed in advance (a max-T bootstrap "
            "over the same test points for the examples' error, Tukey's studentized range over "
            "the runs for the seeds'); "
            f"besides `{best}`, {tied} model{'s' if tied != 1 else ''} may be the best. Groups, "
            f"best first, each the models no model left beats: {shown}. At this size the test "
            f"detects, with 80% power, a difference from the best of about "
            f"{format(ranking.min_detectable, fmt)} (smaller differences may be real but are "
            f"not resolved); `leaderboard.json` gives every separated pair and each model's "
            "comparison with the best (`ranking`), and the aspect tables the probability that "
            "a model beats the best in one run on a fresh test set (P(beats best), Bouthillier "
            "et al. 2021).")
