"""Intervals and paired comparisons: a bootstrap over the test examples and the runs.

A leaderboard number is a mean over runs (seeds) of a metric of test examples: an accuracy of
100 attacked points, an AUROC of 1,000 in-distribution against 1,000 OOD images. Its sampling
error has two sources: which test points were drawn, and which seeds. :func:`interval` gives a
95% percentile interval that covers both, by ``scipy.stats.bootstrap`` over two kinds of
independent samples at once: the runs (resampled with replacement, when there are several)
and the test examples (resampled with replacement, the same draw for every run, because the
runs score the same test points). Rankings are resampled within each class (a stratified
bootstrap, as rliable's), so every draw has both classes.

A column's value in one run may be the mean of several rows (the 15 MNIST-C corruptions of
the same 500 points, the OOD sets of one measure): every :class:`Component` whose examples are
the same points (the same *stratum*: its role and size, and its split) takes the same draw,
so the bootstrap keeps them paired, as it keeps two models paired in :func:`compare`: their
difference is resampled on the same test points and the same runs.

Components without examples (a timing, a parameter count, a run of an older robustbnn) get
the t interval of the runs' values (:func:`seed_interval`), and none for a single run.

References:
    Efron & Tibshirani, "An Introduction to the Bootstrap", 1993 (percentile interval).
    Agarwal et al., "Deep Reinforcement Learning at the Edge of the Statistical Precipice",
    NeurIPS 2021 (rliable: stratified bootstrap intervals).
    Bouthillier et al., "Accounting for Variance in Machine Learning Benchmarks", MLSys 2021
    (data sampling and seeds in one comparison; the probability of outperforming).
    Holm, "A Simple Sequentially Rejective Multiple Test Procedure", Scand. J. Stat. 1979.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
from scipy import stats

from robustbnn.results import names as n

__all__ = ["ALPHA", "LEVEL", "MEAN_METRICS", "N_RESAMPLES", "POWER", "RANKING_PARTS",
           "Comparison", "Component", "compare", "holm", "interval", "min_detectable",
           "point", "seed_interval", "split_half"]

ALPHA = 0.05  # the paired tests' family-wise level (Holm); intervals are at 1 - ALPHA
LEVEL = 1 - ALPHA  # every interval's confidence level, 0.95
POWER = 0.8  # of the minimum detectable difference
N_RESAMPLES = 2000
SEED = 20211  # the bootstrap's own stream: a report is a pure function of its results
_BATCH = 250  # resamples evaluated at once (memory: batch x examples)

# Metrics that are the mean of a part named by the metric (robustbnn.results.examples).
MEAN_METRICS = frozenset({n.ACCURACY, n.NLL, n.BRIER, n.EXPECTED_ACCURACY, n.ALL_K_ACCURACY,
                          n.DETECTION_AWARE_ACCURACY, n.TARGET_SUCCESS})
# Ranking metrics with an interval: the prefix of their ``score`` and ``label`` parts.
RANKING_PARTS = {n.AUROC: "", n.AUPR_IN: "", n.AUPR_OUT: "", n.FPR_AT_95_TPR: "",
                 n.ADVERSARY_DETECTION: f"{n.ADVERSARY_DETECTION}_",
                 n.ERROR_DETECTION: f"{n.ERROR_DETECTION}_"}
# The ranking metrics read off the ROC or PR curve of the resample (the others are AUROCs).
CURVE_METRICS = frozenset({n.AUPR_IN, n.AUPR_OUT, n.FPR_AT_95_TPR})
TPR_LEVEL = 0.95  # of fpr_at_95_tpr
ECE_BINS = 15  # as robustbnn.metrics.classification.ece's default, which the rows use


@dataclasses.dataclass(frozen=True)
class Component:
    """One row's examples in one run, restricted to some of them.

    Attributes:
        metric: The row's metric (a key of :data:`MEAN_METRICS`, :data:`RANKING_PARTS` or
            ``ece``).
        parts: Its per-example parts (:mod:`robustbnn.results.examples`).
        keep: Positions of the examples it is computed on (None: all), e.g. the scoring half
            of a split (:func:`split_half`).
        tag: Names the subset ``keep`` is (``"score"``), so that only components of one
            subset share draws.
    """

    metric: str
    parts: Mapping[str, np.ndarray]
    keep: np.ndarray | None = None
    tag: str = ""

    def strata(self) -> list[tuple[str, np.ndarray]]:
        """The component's strata: a key shared by every component of the same test points,
        and the positions of its examples in each."""
        if self.metric in RANKING_PARTS:
            label = np.asarray(self.parts[RANKING_PARTS[self.metric] + "label"])
            groups = (("neg", np.flatnonzero(label == 0)), ("pos", np.flatnonzero(label == 1)))
        else:
            size = len(next(iter(self.parts.values())))
            groups = (("all", np.arange(size)),)
        out = []
        for role, positions in groups:
            if self.keep is not None:
                positions = np.intersect1d(positions, self.keep)
            out.append((f"{role}:{len(positions)}:{self.tag}", positions))
        return out

    def values(self, draws: Sequence[np.ndarray]) -> np.ndarray:
        """The metric on each resample: ``draws`` holds one (batch, size) array per stratum
        (:meth:`strata` order) of indices into that stratum's positions; returns (batch,)."""
        metric, parts = self.metric, self.parts
        strata = [pos for _, pos in self.strata()]
        if metric in MEAN_METRICS:
            return np.asarray(parts[metric], dtype=np.float64)[strata[0]][draws[0]].mean(-1)
        if metric == n.ECE:
            at = strata[0][draws[0]]
            return _ece(np.asarray(parts["confidence"], np.float64)[at],
                        np.asarray(parts[n.ACCURACY], np.float64)[at])
        if metric in CURVE_METRICS:
            score = np.asarray(parts["score"], np.float64)
            return _curve(metric, score[strata[0]], score[strata[1]], draws[0], draws[1])
        if metric in RANKING_PARTS:
            score = np.asarray(parts[RANKING_PARTS[metric] + "score"], np.float64)
            return _auroc(score[strata[0]], score[strata[1]], draws[0], draws[1])
        raise KeyError(f"no interval for metric {metric!r}")

    def supported(self) -> bool:
        """Whether the component's metric has an interval and it holds the parts it needs."""
        need = {n.ECE: ("confidence", n.ACCURACY)}.get(self.metric)
        if self.metric in MEAN_METRICS:
            need = (self.metric,)
        elif self.metric in RANKING_PARTS:
            need = tuple(RANKING_PARTS[self.metric] + p for p in ("score", "label"))
        if need is None or any(p not in self.parts for p in need):
            return False
        if self.metric in RANKING_PARTS:  # both classes present in its subset
            return all(len(pos) for _, pos in self.strata())
        return len(self.strata()[0][1]) > 0


def _counts(draws: np.ndarray, size: int) -> np.ndarray:
    """How often each of ``size`` positions occurs in each row of ``draws`` (batch, k)."""
    batch = draws.shape[0]
    flat = (np.arange(batch)[:, None] * size + draws).ravel()
    return np.bincount(flat, minlength=batch * size).reshape(batch, size).astype(np.float64)


def _auroc(neg: np.ndarray, pos: np.ndarray, draw_neg: np.ndarray,
           draw_pos: np.ndarray) -> np.ndarray:
    """AUROC of the resampled positives over the resampled negatives (ties count 1/2), the
    Mann-Whitney statistic, in O(batch x (n0 + n1)): each positive's count of negatives
    below it (and tied) is a difference of cumulative multiplicities over the sorted
    negatives. ``neg`` (n0,), ``pos`` (n1,) scores; draws (batch, n0), (batch, n1)."""
    order = np.argsort(neg, kind="stable")
    sorted_neg = neg[order]
    below = np.searchsorted(sorted_neg, pos, side="left")  # (n1,)
    upto = np.searchsorted(sorted_neg, pos, side="right")
    weight = _counts(draw_neg, len(neg))[:, order]  # multiplicities, sorted order
    cum = np.concatenate([np.zeros((weight.shape[0], 1)), weight.cumsum(-1)], axis=-1)
    per_pos = cum[:, below] + 0.5 * (cum[:, upto] - cum[:, below])  # (batch, n1)
    wins = (_counts(draw_pos, len(pos)) * per_pos).sum(-1)
    return wins / (draw_neg.shape[-1] * draw_pos.shape[-1])


def _curve(metric: str, neg: np.ndarray, pos: np.ndarray, draw_neg: np.ndarray,
           draw_pos: np.ndarray) -> np.ndarray:
    """AUPR-in, AUPR-out or FPR at 95% TPR of each resample, as
    :mod:`robustbnn.metrics.ranking` defines them (tied scores one threshold; average
    precision as the step sum), from the multiplicities of the resampled examples."""
    scores = np.r_[neg, pos]
    positive = np.r_[np.zeros(len(neg)), np.ones(len(pos))]  # OOD
    weight = np.concatenate([_counts(draw_neg, len(neg)), _counts(draw_pos, len(pos))], -1)
    if metric == n.AUPR_IN:  # in-distribution positive, ranked by certainty
        scores, positive = -scores, 1 - positive
    order = np.argsort(scores, kind="mergesort")[::-1]
    scores, positive, weight = scores[order], positive[order], weight[:, order]
    last = np.r_[np.flatnonzero(np.diff(scores)), len(scores) - 1]  # ends of tied runs
    tps = np.cumsum(weight * positive, axis=-1)[:, last]
    fps = np.cumsum(weight * (1 - positive), axis=-1)[:, last]
    if metric == n.FPR_AT_95_TPR:
        tpr, fpr = tps / tps[:, -1:], fps / fps[:, -1:]
        return np.take_along_axis(fpr, np.argmax(tpr >= TPR_LEVEL, -1)[:, None], -1)[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.nan_to_num(tps / (tps + fps))
    recall = tps / tps[:, -1:]
    return (np.diff(recall, prepend=0.0, axis=-1) * precision).sum(-1)


def _ece(confidence: np.ndarray, correct: np.ndarray) -> np.ndarray:
    """ECE with :data:`ECE_BINS` right-closed equal-width bins per row, as
    :func:`robustbnn.metrics.classification.ece`; (batch, n) each -> (batch,)."""
    edges = np.linspace(0, 1, ECE_BINS + 1)[1:-1]
    bins = np.searchsorted(edges, confidence, side="left")  # torch.bucketize's bins
    batch, size = confidence.shape
    flat = (np.arange(batch)[:, None] * ECE_BINS + bins).ravel()
    gap = np.bincount(flat, weights=(correct - confidence).ravel(), minlength=batch * ECE_BINS)
    return np.abs(gap.reshape(batch, ECE_BINS)).sum(-1) / size


def point(component: Component) -> float:
    """The component's metric on all of its examples (no resampling)."""
    return float(component.values([np.arange(len(pos))[None, :]
                                   for _, pos in component.strata()])[0])


def split_half(size: int, seed: int, role: str) -> tuple[np.ndarray, np.ndarray]:
    """A fixed random split of ``size`` example positions into a selection half and a
    scoring half (the selection half is the smaller when ``size`` is odd), from ``seed`` and
    ``role`` only: every model of a run gets the same split of the same test points.

    Example:
        >>> sel, score = split_half(5, 0, "all")
        >>> len(sel), len(score), sorted([*sel, *score]) == [0, 1, 2, 3, 4]
        (2, 3, True)
    """
    rng = np.random.default_rng([seed, size, *role.encode()])
    order = rng.permutation(size)
    return np.sort(order[: size // 2]), np.sort(order[size // 2:])


# One model's sample of a column: per run, the components whose mean is the run's value.
Sample = Sequence[Sequence[Component]]


class _Draws:
    """The bootstrap's samples for some models' columns: the runs and one sample of positions
    per stratum key; turns scipy's resamples into each model's values."""

    def __init__(self, samples: Sequence[Sample]) -> None:
        runs = {len(s) for s in samples}
        if len(runs) != 1:
            raise ValueError(f"models compared on different numbers of runs: {sorted(runs)}")
        self.runs = runs.pop()
        self.keys: dict[str, int] = {}
        for sample in samples:
            for comps in sample:
                for comp in comps:
                    for key, pos in comp.strata():
                        self.keys.setdefault(key, len(pos))
        self.order = list(self.keys)

    def data(self) -> tuple[np.ndarray, ...]:
        """scipy's samples: the run positions (with several runs), then 0..size-1 per key."""
        runs = (np.arange(self.runs),) if self.runs > 1 else ()
        return (*runs, *(np.arange(self.keys[k]) for k in self.order))

    def values(self, sample: Sample, resampled: Sequence[np.ndarray]) -> np.ndarray:
        """Per resample, the sample's mean over the resampled runs of its runs' values."""
        resampled = [np.atleast_2d(r) for r in resampled]
        runs, rest = (resampled[0], resampled[1:]) if self.runs > 1 else (None, resampled)
        by_key = dict(zip(self.order, rest, strict=True))
        per_run = np.stack([self._run(comps, by_key) for comps in sample], axis=-1)
        if runs is None:
            return per_run.mean(-1)
        return np.take_along_axis(per_run, runs, axis=-1).mean(-1)

    def per_run(self, sample: Sample, resampled: Sequence[np.ndarray]) -> np.ndarray:
        """Per resample and run, the run's value on the resampled examples, (batch, R)."""
        resampled = [np.atleast_2d(r) for r in resampled]
        rest = resampled[1:] if self.runs > 1 else resampled
        by_key = dict(zip(self.order, rest, strict=True))
        return np.stack([self._run(comps, by_key) for comps in sample], axis=-1)

    @staticmethod
    def _run(comps: Sequence[Component], by_key: dict[str, np.ndarray]) -> np.ndarray:
        values = [c.values([by_key[key] for key, _ in c.strata()]) for c in comps]
        return np.mean(values, axis=0)


def _bootstrap(draws: _Draws, statistic: object) -> np.ndarray:
    """The bootstrap distribution of ``statistic`` (a function of the resampled samples)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant distribution (all correct) is a result
        res = stats.bootstrap(draws.data(), statistic, paired=False, vectorized=True,
                              n_resamples=N_RESAMPLES, batch=_BATCH, method="percentile",
                              confidence_level=LEVEL, random_state=np.random.default_rng(SEED))
    return np.asarray(res.bootstrap_distribution)


def _percentiles(dist: np.ndarray) -> tuple[float, float]:
    lo, hi = np.percentile(dist, [100 * ALPHA / 2, 100 * (1 - ALPHA / 2)], axis=-1)
    return float(lo), float(hi)


def interval(sample: Sample) -> tuple[float, float]:
    """The 95% percentile bootstrap interval of a column's run-averaged value, over the test
    examples and (with several runs) the runs; see the module docstring.

    Args:
        sample: Per run, the components of the run's value (each supported: see
            :meth:`Component.supported`).

    Example:
        >>> correct = {"accuracy": np.r_[np.ones(80), np.zeros(20)]}
        >>> lo, hi = interval([[Component("accuracy", correct)]])
        >>> round(lo, 2), round(hi, 2)
        (0.72, 0.87)
    """
    draws = _Draws([sample])
    dist = _bootstrap(draws, lambda *r, axis=-1: draws.values(sample, r))
    return _percentiles(dist)


def seed_interval(values: Sequence[float]) -> tuple[float, float]:
    """The 95% t interval of the mean of per-run values (NaN for fewer than two runs): for
    numbers without examples (a timing), the seeds are the only sample.

    Example:
        >>> [round(v, 3) for v in seed_interval([1.0, 2.0, 3.0])]
        [-0.484, 4.484]
    """
    values = np.asarray(values, dtype=np.float64)
    if len(values) < 2 or not np.isfinite(values).all():
        return math.nan, math.nan
    mean, sem = float(values.mean()), float(stats.sem(values))
    if sem == 0:
        return mean, mean
    lo, hi = stats.t.interval(LEVEL, len(values) - 1, loc=mean, scale=sem)
    return float(lo), float(hi)


@dataclasses.dataclass(frozen=True)
class Comparison:
    """A paired comparison of model ``a`` against ``b`` on one column.

    Attributes:
        difference: a's value minus b's (run-averaged, on all examples).
        low: Lower end of the difference's 95% interval.
        high: Upper end.
        p_value: Two-sided bootstrap p-value of "no difference" (1 for identical samples).
        se: The bootstrap standard error of the difference.
        p_better: The probability that a's value beats b's in one run on a fresh test set
            (Bouthillier et al. 2021; ties count 1/2), ``higher`` deciding what beats means.
    """

    difference: float
    low: float
    high: float
    p_value: float
    se: float
    p_better: float


def compare(a: Sample, b: Sample, *, higher: bool = True) -> Comparison:
    """Paired bootstrap comparison of two models' samples of one column (same runs, same test
    points): the difference a - b resampled on the same examples and runs.

    Example:
        >>> same = {"accuracy": np.r_[np.ones(50), np.zeros(50)]}
        >>> compare([[Component("accuracy", same)]], [[Component("accuracy", same)]]).p_value
        1.0
    """
    draws = _Draws([a, b])

    def statistic(*resampled: np.ndarray, axis: int = -1) -> np.ndarray:
        diff = draws.values(a, resampled) - draws.values(b, resampled)
        va, vb = draws.per_run(a, resampled), draws.per_run(b, resampled)
        beats = (va > vb) if higher else (va < vb)
        better = (beats + 0.5 * (va == vb)).mean(-1)
        return np.stack([diff, better])

    dist = _bootstrap(draws, statistic)
    diffs, better = dist[0], dist[1]
    whole = [np.arange(draws.keys[k])[None, :] for k in draws.order]
    runs = [np.arange(draws.runs)[None, :]] if draws.runs > 1 else []
    difference = float((draws.values(a, [*runs, *whole]) - draws.values(b, [*runs, *whole]))[0])
    lo, hi = _percentiles(diffs)
    p = min(1.0, 2 * min(float((diffs <= 0).mean()), float((diffs >= 0).mean())))
    return Comparison(difference, lo, hi, p, float(diffs.std(ddof=1)), float(better.mean()))


def holm(p_values: Mapping[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values (family-wise error control for several tests).

    Example:
        >>> holm({"a": 0.01, "b": 0.04, "c": 0.03})
        {'a': 0.03, 'b': 0.06, 'c': 0.06}
    """
    order = sorted(p_values, key=lambda k: p_values[k])
    m, running, out = len(order), 0.0, {}
    for i, key in enumerate(order):
        running = max(running, min(1.0, (m - i) * p_values[key]))
        out[key] = round(running, 12)
    return {k: out[k] for k in p_values}


def min_detectable(se: float, *, tests: int = 1) -> float:
    """The smallest true difference a two-sided paired test at level :data:`ALPHA` (divided
    by ``tests``, Holm's first step) detects with power :data:`POWER`, for a difference
    whose standard error is ``se`` (normal approximation: (z_{1-α/2} + z_power) · se).

    Example:
        >>> round(min_detectable(0.01), 4)
        0.028
    """
    z = stats.norm.ppf(1 - ALPHA / (2 * tests)) + stats.norm.ppf(POWER)
    return float(z * se)
