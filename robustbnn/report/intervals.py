"""Intervals and paired comparisons: a bootstrap over the test examples and the runs.

A leaderboard number is a mean over runs (seeds) of a metric of test examples: an accuracy of
100 attacked points, an AUROC of 1,000 in-distribution against 1,000 OOD images. Its sampling
error has two sources: which test points were drawn, and which seeds. :func:`interval` gives a
95% interval that covers both (:class:`Spread`): the examples' error from a bootstrap of the
test examples (the same draw for every run, because the runs score the same test points;
rankings resampled within each class, a stratified bootstrap as rliable's), the seeds' error
from the runs' values, each at its own quantile (normal; Student's t with ``runs - 1``
degrees of freedom) and added in quadrature around the estimate. A bootstrap over 3 runs
would give about their range: it covered 0.73 of simulated truths when the seeds' error was
4 times the examples' (``tests/report/test_coverage.py`` holds the new one to at least 0.93).

A resample of the examples is drawn as its multiplicities (how often each example occurs),
so every metric is a weighted sum over the examples: a mean is one matrix product, an AUROC
a cumulative sum over the sorted scores. ``scipy.stats.bootstrap`` draws index arrays and
evaluates a statistic on each gathered copy; a report bootstraps thousands of numbers, and
weighted sums avoid gathering a copy per resample. The resampling scheme is the same;
``tests/report/test_intervals.py`` checks the examples' error against
``scipy.stats.bootstrap``'s and ``tests/report/test_coverage.py`` the intervals' coverage by
simulation. Each stratum's draws come from a stream of their own (:func:`distribution`), so
a model's distribution is computed once and reused for every comparison it enters.

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
import functools
import hashlib
import math
from collections.abc import Mapping, Sequence

import numpy as np
from scipy import optimize, stats

from robustbnn.results import names as n
from robustbnn.results.schema import RANGES

__all__ = ["ALPHA", "BINARY_METRICS", "CURVE_METRICS", "LEVEL", "MEAN_METRICS", "N_RESAMPLES",
           "PAIRED_COPIES", "POWER", "RANKING_PARTS", "Comparison", "Component", "Spread",
           "compare", "counts", "distribution", "holm", "interval", "min_detectable", "p_value",
           "point", "run_points", "seed_interval", "split_half", "spread"]

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
# Ranking metrics whose two classes are copies of the same test points, in the same order
# (robustbnn.run.tasks._scoring.adversarial_rows: the clean points, then their adversarial
# versions): the k-th negative and the k-th positive are one test point, resampled and split
# together (an independent resampling of the two made the interval about 18% too narrow).
PAIRED_COPIES = frozenset({n.ADVERSARY_DETECTION})
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
        and the positions of its examples in each (computed once: every resample reads
        them)."""
        return self._strata

    @functools.cached_property
    def _strata(self) -> list[tuple[str, np.ndarray]]:
        if self.metric in RANKING_PARTS:
            label = np.asarray(self.parts[RANKING_PARTS[self.metric] + "label"])
            neg, pos = np.flatnonzero(label == 0), np.flatnonzero(label == 1)
            # The clean and adversarial copies of one test point: one stratum role, so the
            # k-th of each class is resampled (and split) together.
            paired = self.metric in PAIRED_COPIES and len(neg) == len(pos)
            groups = (("copy" if paired else "neg", neg), ("copy" if paired else "pos", pos))
        else:
            size = len(next(iter(self.parts.values())))
            groups = (("all", np.arange(size)),)
        out = []
        for role, positions in groups:
            if self.keep is not None:
                positions = np.intersect1d(positions, self.keep)
            out.append((f"{role}:{len(positions)}:{self.tag}", positions))
        return out

    def values(self, weights: Sequence[np.ndarray]) -> np.ndarray:
        """The metric on each resample: ``weights`` holds one (batch, size) array per stratum
        (:meth:`strata` order), how often each of its examples occurs in the resample (the
        multiplicities of drawing ``size`` of them with replacement); returns (batch,)."""
        metric, parts = self.metric, self.parts
        strata = [pos for _, pos in self.strata()]
        if metric in MEAN_METRICS:
            x = np.asarray(parts[metric], dtype=np.float64)[strata[0]]
            return weights[0] @ x / len(x)
        if metric == n.ECE:
            at = strata[0]
            return _ece(np.asarray(parts["confidence"], np.float64)[at],
                        np.asarray(parts[n.ACCURACY], np.float64)[at], weights[0])
        if metric in CURVE_METRICS:
            score = np.asarray(parts["score"], np.float64)
            return _curve(metric, score[strata[0]], score[strata[1]], weights[0], weights[1])
        if metric in RANKING_PARTS:
            score = np.asarray(parts[RANKING_PARTS[metric] + "score"], np.float64)
            return _auroc(score[strata[0]], score[strata[1]], weights[0], weights[1])
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


def counts(draws: np.ndarray, size: int) -> np.ndarray:
    """How often each of ``size`` positions occurs in each row of ``draws`` (batch, k): the
    multiplicities :meth:`Component.values` takes, (batch, size).

    Example:
        >>> counts(np.array([[0, 0, 2]]), 3).tolist()
        [[2.0, 0.0, 1.0]]
    """
    batch = draws.shape[0]
    flat = (np.arange(batch)[:, None] * size + draws).ravel()
    return np.bincount(flat, minlength=batch * size).reshape(batch, size).astype(np.float64)


def _auroc(neg: np.ndarray, pos: np.ndarray, w_neg: np.ndarray,
           w_pos: np.ndarray) -> np.ndarray:
    """AUROC of the resampled positives over the resampled negatives (ties count 1/2), the
    Mann-Whitney statistic, in O(batch x (n0 + n1)): each positive's count of negatives
    below it (and tied) is a difference of cumulative multiplicities over the sorted
    negatives. ``neg`` (n0,), ``pos`` (n1,) scores; multiplicities (batch, n0), (batch, n1)."""
    order = np.argsort(neg, kind="stable")
    sorted_neg = neg[order]
    below = np.searchsorted(sorted_neg, pos, side="left")  # (n1,)
    upto = np.searchsorted(sorted_neg, pos, side="right")
    cum = np.concatenate([np.zeros((w_neg.shape[0], 1)), w_neg[:, order].cumsum(-1)], axis=-1)
    per_pos = cum[:, below] + 0.5 * (cum[:, upto] - cum[:, below])  # (batch, n1)
    return (w_pos * per_pos).sum(-1) / (len(neg) * len(pos))


def _curve(metric: str, neg: np.ndarray, pos: np.ndarray, w_neg: np.ndarray,
           w_pos: np.ndarray) -> np.ndarray:
    """AUPR-in, AUPR-out or FPR at 95% TPR of each resample, as
    :mod:`robustbnn.metrics.ranking` defines them (tied scores one threshold; average
    precision as the step sum), from the multiplicities of the resampled examples."""
    scores = np.r_[neg, pos]
    positive = np.r_[np.zeros(len(neg)), np.ones(len(pos))]  # OOD
    weight = np.concatenate([w_neg, w_pos], -1)
    if metric == n.AUPR_IN:  # in-distribution positive, ranked by certainty
        scores, positive = -scores, 1 - positive
    order = np.argsort(scores, kind="mergesort")[::-1]
    scores, positive = scores[order], positive[order]
    last = np.r_[np.flatnonzero(np.diff(scores)), len(scores) - 1]  # ends of tied runs
    pos_w = weight[:, order] * positive
    tps = np.cumsum(pos_w, axis=-1)[:, last]
    fps = np.cumsum(weight[:, order] - pos_w, axis=-1)[:, last]
    if metric == n.FPR_AT_95_TPR:
        tpr, fpr = tps / tps[:, -1:], fps / fps[:, -1:]
        return np.take_along_axis(fpr, np.argmax(tpr >= TPR_LEVEL, -1)[:, None], -1)[:, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.nan_to_num(tps / (tps + fps))
    recall = tps / tps[:, -1:]
    return (np.diff(recall, prepend=0.0, axis=-1) * precision).sum(-1)


def _ece(confidence: np.ndarray, correct: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """ECE with :data:`ECE_BINS` right-closed equal-width bins, as
    :func:`robustbnn.metrics.classification.ece`, of each resample: ``confidence`` and
    ``correct`` (n,), multiplicities (batch, n) -> (batch,)."""
    edges = np.linspace(0, 1, ECE_BINS + 1)[1:-1]
    bins = np.searchsorted(edges, confidence, side="left")  # torch.bucketize's bins
    gaps = np.zeros((len(confidence), ECE_BINS))
    gaps[np.arange(len(confidence)), bins] = correct - confidence
    return np.abs(weight @ gaps).sum(-1) / len(confidence)


def point(component: Component) -> float:
    """The component's metric on all of its examples (no resampling)."""
    return float(component.values([np.ones((1, len(pos))) for _, pos in component.strata()])[0])


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


@functools.lru_cache(maxsize=32)
def _weights(key: str, size: int, start: int, batch: int) -> np.ndarray:
    """The multiplicities of resamples ``start`` to ``start + batch`` of one stratum key's
    ``size`` examples, (batch, size), from a stream of the key's own: the same draws for a
    key whatever else is resampled, so every model (and every row) on those points is
    resampled alike and a model's distribution can be reused across comparisons. Cached: the
    rows of one table share a few keys."""
    digest = int(hashlib.sha256(key.encode()).hexdigest()[:15], 16)
    rng = np.random.default_rng([SEED, digest, start])
    out = counts(rng.integers(0, size, (batch, size)), size)
    out.flags.writeable = False
    return out


def distribution(sample: Sample, resamples: int = N_RESAMPLES) -> np.ndarray:
    """Per bootstrap resample of the test examples and per run, the run's value, shape
    (resamples, runs): every run on the same resample of the points (the runs score the same
    test points), every component of one stratum key on the same draw."""
    keys = {key: len(pos) for comps in sample for comp in comps for key, pos in comp.strata()}
    out = []
    for start in range(0, resamples, _BATCH):
        batch = min(_BATCH, resamples - start)
        weights = {key: _weights(key, size, start, batch) for key, size in keys.items()}
        out.append(np.stack([np.mean([c.values([weights[k] for k, _ in c.strata()])
                                      for c in comps], axis=0) for comps in sample], axis=-1))
    return np.concatenate(out)


# Mean metrics whose per-example parts are 0 or 1: at 0 or n of n points their interval has
# the Wilson score interval's ends, not a width of zero.
BINARY_METRICS = frozenset({n.ACCURACY, n.ALL_K_ACCURACY, n.DETECTION_AWARE_ACCURACY,
                            n.TARGET_SUCCESS})


@dataclasses.dataclass(frozen=True)
class Spread:
    """A column value's estimate and its two sources of sampling error.

    Attributes:
        estimate: The mean over runs of each run's value on all of its examples.
        se_examples: Standard error from the test examples: the standard deviation, over
            bootstrap resamples of the examples (the same draw in every run), of the mean over
            runs.
        se_seeds: Standard error from the runs: the sample standard deviation of the runs'
            values over the square root of their number (the runs score the same test
            points, so their values differ by the seed alone); 0 for one run, where it cannot
            be measured.
        runs: How many runs.
        points: Test points per run (the first stratum's), for the binomial ends.
    """

    estimate: float
    se_examples: float
    se_seeds: float
    runs: int
    points: int = 0

    @property
    def se(self) -> float:
        """Both sources together: ``sqrt(se_examples² + se_seeds²)``."""
        return math.hypot(self.se_examples, self.se_seeds)

    def half_width(self) -> float:
        """The 95% interval's half width: each source's half width at its own quantile (the
        normal one for the examples, Student's t with ``runs - 1`` degrees of freedom for the
        seeds), added in quadrature. With the seeds dominant it is the t interval of the runs'
        values; with the examples dominant, the normal interval of the bootstrap's error; in
        between it is wider than the Welch-Satterthwaite t interval, which at 3 runs covered 0.90
        of simulated truths with the seeds' error 4 times the examples' (docs/reports.md)."""
        z = float(stats.norm.ppf(1 - ALPHA / 2))
        t = float(stats.t.ppf(1 - ALPHA / 2, self.runs - 1)) if self.runs > 1 else z
        return math.hypot(z * self.se_examples, t * self.se_seeds)

    def bounds(self, metric: str = "") -> tuple[float, float]:
        """The 95% interval (:func:`interval`): ``estimate ± half_width``, at least the Wilson
        interval of a 0/1 ``metric``, cut to the range ``metric`` can take."""
        half = self.half_width()
        lo, hi = self.estimate - half, self.estimate + half
        if metric in BINARY_METRICS and self.points:
            b_lo, b_hi = _wilson(self.estimate, self.points)
            lo, hi = min(lo, b_lo), max(hi, b_hi)
        low, high = RANGES.get(metric, (-math.inf, math.inf))
        return max(lo, low), min(hi, high)

    @property
    def seed_share(self) -> float:
        """The share of the variance that comes from the seeds (NaN for one run)."""
        if self.runs < 2:
            return math.nan
        total = self.se ** 2
        return self.se_seeds ** 2 / total if total > 0 else 0.0


def run_points(sample: Sample) -> np.ndarray:
    """Each run's value on all of its examples (the mean of its components)."""
    return np.array([np.mean([point(c) for c in comps]) for comps in sample])


def spread(sample: Sample | np.ndarray, resamples: int = N_RESAMPLES, *,
           dist: np.ndarray | None = None) -> Spread:
    """The :class:`Spread` of a column's run-averaged value.

    Args:
        sample: Per run, the components of the run's value, or only its :func:`distribution`
            (then each run's value is the mean of its resamples).
        resamples: How many, when the distribution is computed here.
        dist: The sample's distribution, when already computed.
    """
    if isinstance(sample, np.ndarray):
        dist, points, size = sample, sample.mean(0), 0
    else:
        dist = distribution(sample, resamples) if dist is None else dist
        points, size = run_points(sample), len(sample[0][0].strata()[0][1])
    runs = len(points)
    se_ex = float(dist.mean(-1).std(ddof=1)) if len(dist) > 1 else 0.0
    se_seeds = float(points.std(ddof=1) / math.sqrt(runs)) if runs > 1 else 0.0
    return Spread(float(points.mean()), se_ex, se_seeds, runs, size)


def _wilson(estimate: float, points: int) -> tuple[float, float]:
    """The Wilson score 95% interval of a proportion ``estimate`` of ``points`` (a mean over
    runs may be a fraction of a point; the formula takes it): at 0 of 100, [0, 0.037]."""
    p = min(max(estimate, 0.0), 1.0)
    z2 = float(stats.norm.ppf(1 - ALPHA / 2)) ** 2
    centre = (p + z2 / (2 * points)) / (1 + z2 / points)
    half = math.sqrt(z2 * p * (1 - p) / points + z2 ** 2 / (4 * points ** 2)) / (1 + z2 / points)
    return max(0.0, centre - half), min(1.0, centre + half)


def interval(sample: Sample | np.ndarray, resamples: int = N_RESAMPLES, *, metric: str = "",
             dist: np.ndarray | None = None) -> tuple[float, float]:
    """The 95% interval of a column's run-averaged value over the test examples and the runs:
    ``estimate ± half``, ``half`` from :meth:`Spread.half_width` (each source's half width at
    its own quantile, added in quadrature: a t-type interval; with 3 runs whose seeds dominate
    it is as wide as the t interval of the runs' values, where a bootstrap over 3 runs would
    give about their range). Centred on the estimate: a binned ECE is biased upward and its
    resamples more so, which put the percentile interval above the estimate (bhn_realnvp's
    0.0130 outside [0.0137, 0.026]); subtracting the bootstrap's bias estimate as well (the
    mean of the resampled values less the estimate) raised the spread of the centre more than
    it removed, and covered
    less (0.915 against 0.938 in a simulation of an ECE of 0.08 on 1,000 points). A 0/1
    metric's interval reaches at least the Wilson score interval of its points (so 0 of 100
    gives [0, 0.037], not a width of zero); every interval is cut to the range ``metric`` can
    take (:data:`robustbnn.results.schema.RANGES`).

    Args:
        sample: Per run, the components of the run's value (each supported: see
            :meth:`Component.supported`), or its :func:`distribution`.
        resamples: How many (for a sample; a distribution has its own).
        metric: The column's metric (its range and whether it is 0/1 per example).
        dist: The sample's distribution, when already computed.

    Example:
        >>> correct = {"accuracy": np.r_[np.ones(80), np.zeros(20)]}
        >>> lo, hi = interval([[Component("accuracy", correct)]], metric="accuracy")
        >>> round(lo, 3), round(hi, 3)
        (0.711, 0.878)
    """
    return spread(sample, resamples, dist=dist).bounds(metric)


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
        p_value: Two-sided p-value of "no difference" that inverts the interval
            (:func:`p_value`; 1 for identical samples).
        se: The difference's standard error, both sources together.
        p_better: The probability that a's value beats b's in one run on a fresh test set
            (Bouthillier et al. 2021; ties count 1/2), ``higher`` deciding what beats means.
    """

    difference: float
    low: float
    high: float
    p_value: float
    se: float
    p_better: float


def compare(a: Sample | np.ndarray, b: Sample | np.ndarray, *,
            higher: bool = True) -> Comparison:
    """Paired comparison of two models' samples of one column (same runs, same test points):
    the difference a - b, its 95% interval and p-value built as every interval is
    (:meth:`Spread.half_width`): the examples' standard error of the difference from the same
    bootstrap resamples of both, the seeds' from the runs' differences (Student's t with
    runs - 1 degrees of freedom), the two half widths added in quadrature. The p-value is the
    level at which that interval just reaches 0 (:func:`p_value`): with one run a z test on
    the examples' error, with the examples' error nil a paired t test over the runs.

    Args:
        a: One model's sample (per run, its components), or its :func:`distribution`.
        b: The other's, on the same runs and test points.
        higher: Whether a higher value is better (for :attr:`Comparison.p_better`).

    Example:
        >>> same = {"accuracy": np.r_[np.ones(50), np.zeros(50)]}
        >>> compare([[Component("accuracy", same)]], [[Component("accuracy", same)]]).p_value
        1.0
    """
    da = a if isinstance(a, np.ndarray) else distribution(a)
    db = b if isinstance(b, np.ndarray) else distribution(b)
    if da.shape != db.shape:
        raise ValueError(f"models compared on different numbers of runs: {da.shape[1]} and "
                         f"{db.shape[1]}")
    runs = da.shape[1]
    points = _points(a, da) - _points(b, db)  # each run's difference on all examples
    difference = float(points.mean())
    diffs = da.mean(-1) - db.mean(-1)  # the examples' resamples, every run on each
    se_ex = float(diffs.std(ddof=1)) if len(diffs) > 1 else 0.0
    se_seeds = float(points.std(ddof=1) / math.sqrt(runs)) if runs > 1 else 0.0
    half = Spread(difference, se_ex, se_seeds, runs).half_width()
    beats = (da > db) if higher else (da < db)
    better = (beats + 0.5 * (da == db)).mean()
    return Comparison(difference, difference - half, difference + half,
                      p_value(difference, se_ex, se_seeds, runs), math.hypot(se_ex, se_seeds),
                      float(better))


def _points(sample: Sample | np.ndarray, dist: np.ndarray) -> np.ndarray:
    """Each run's value on all examples (given only a distribution, its resamples' mean)."""
    return dist.mean(0) if isinstance(sample, np.ndarray) else run_points(sample)


def p_value(difference: float, se_examples: float, se_seeds: float, runs: int) -> float:
    """The two-sided p-value of "no difference" that inverts the interval
    ``difference ± hypot(z(α) se_examples, t(α, runs - 1) se_seeds)``: the α at which it
    just reaches 0 (1 when the difference is 0; with one of the errors nil, the z or the t
    test of the other).

    Example:
        >>> round(p_value(0.1, 0.05, 0.0, 3), 4)  # a z test: 2 (1 - Phi(2))
        0.0455
        >>> round(p_value(0.1, 0.0, 0.05, 3), 4)  # a paired t test on 2 degrees of freedom
        0.1835
    """
    if difference == 0:
        return 1.0
    if se_examples == 0 and se_seeds == 0:
        return 0.0
    if runs < 2:
        se_seeds = 0.0

    def excess(alpha: float) -> float:
        z = stats.norm.isf(alpha / 2)
        t = stats.t.isf(alpha / 2, runs - 1) if se_seeds else 0.0
        return math.hypot(z * se_examples, t * se_seeds) - abs(difference)

    tiny = 1e-15
    if excess(tiny) < 0:
        return tiny
    return float(optimize.brentq(excess, tiny, 1.0, xtol=1e-12))


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
