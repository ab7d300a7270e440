"""Which models may be the best: every pair tested at once, the best not fixed in advance.

The sort column's "≈" group is the set of models that no other model beats significantly, with
all ``k (k - 1) / 2`` pairs in one family at family-wise level
:data:`~robustbnn.report.intervals.ALPHA`: under a global null of ``k`` equal models, the
chance that any of them is left out of the set is at most about 5% (simulated with 17 models in
``tests/report/test_coverage.py``), whichever model the data happen to put first. Testing
each model against the observed best instead (the best picked from the data, then a Holm
family per group) separated at least one of 17 equal models about 21% of the time (issue 48).

A pair's difference ``a - b`` (run-averaged, on the same test points and runs) has the two
sources of error of :class:`~robustbnn.report.intervals.Spread`: the examples (its standard
error over the paired bootstrap resamples) and the seeds (the standard error of the runs'
differences). ``a`` beats ``b`` when the difference exceeds its simultaneous margin,

    margin = sqrt((c_examples · se_examples)² + (c_seeds · se_seeds)²)

with each source's error at its own simultaneous critical value, added in quadrature as the
intervals add them:

* ``c_examples``: the max-T bootstrap (Westfall & Young 1993): the 95% quantile, over the
  paired resamples of the test examples, of the largest studentized deviation
  ``|d*_ab - d_ab| / se_ab`` over all pairs (it keeps the dependence between pairs that share
  a model and the same test points), and at least Tukey's value for ``k`` means with
  ``n - 1`` degrees of freedom (``n`` test points): on 100 attacked points the bootstrap's
  own quantile (about 3.43 for 17 models) left a model out of 17 equal ones 8% of the time;
* ``c_seeds``: the studentized range's 95% quantile for ``k`` means with ``k (runs - 1)``
  degrees of freedom, over sqrt 2 (Tukey's all-pairs critical value), applied to the pooled
  run variance of all ``k`` models, or to the pair's own where its runs spread more. Each
  pair's own seed error alone has ``runs - 1`` degrees of freedom (2 with 3 runs): the
  largest of 136 such t statistics is far heavier-tailed than the studentized range, and
  left out up to half of 17 equal models in simulation; pooling (the homoscedastic
  assumption of Tukey's test), guarded by the pair's own spread, holds the family's level.

Groups: the first is the may-be-best set; each next one the models that no model left
beats, from the same family of decisions (no new family per group).

References:
    Hsu, "Multiple Comparisons: Theory and Methods", 1996 (comparisons with the best).
    Westfall & Young, "Resampling-Based Multiple Testing", 1993 (max-T).
    Tukey, "The Problem of Multiple Comparisons", 1953 (the studentized range).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import statistics
from collections.abc import Mapping, Sequence

import numpy as np
from scipy import stats

from robustbnn.report.intervals import ALPHA, POWER

__all__ = ["BestSet", "PairTest", "best_set", "tukey_critical"]


@dataclasses.dataclass(frozen=True)
class PairTest:
    """One pair's simultaneous test.

    Attributes:
        difference: a's run-averaged value minus b's.
        se_examples: Its standard error from the test examples (paired bootstrap).
        se_seeds: Its standard error from the runs (0 for one run).
        margin: The simultaneous margin the difference must exceed (see the module).
    """

    difference: float
    se_examples: float
    se_seeds: float
    margin: float

    @property
    def separated(self) -> bool:
        """Whether one of the two beats the other at the family-wise level."""
        return abs(self.difference) > self.margin

    @property
    def seed_share(self) -> float:
        """The share of the difference's variance from the seeds."""
        total = self.se_examples ** 2 + self.se_seeds ** 2
        return self.se_seeds ** 2 / total if total > 0 else 0.0


@dataclasses.dataclass(frozen=True)
class BestSet:
    """The may-be-best set of a column and the decisions behind it.

    Attributes:
        groups: The models in tiers, each best first (by estimate): the first is the set of
            models no other beats; each next one, of those left, the models no model left
            beats.
        pairs: Per pair ``(a, b)`` (a before b in estimate order, higher value first when
            higher is better), its :class:`PairTest`.
        c_examples: The max-T critical value of the examples' part.
        c_seeds: The studentized-range critical value of the seeds' part (NaN for one run).
        min_detectable: The difference from the best that the test detects with 80% power,
            about: the median over the best's pairs of ``margin + z_0.8 · se``.
    """

    groups: tuple[tuple[str, ...], ...]
    pairs: dict[tuple[str, str], PairTest]
    c_examples: float
    c_seeds: float
    min_detectable: float

    def beats(self) -> list[tuple[str, str]]:
        """Every separated pair as (winner, loser)."""
        out = []
        for (a, b), test in self.pairs.items():
            if test.separated:
                out.append((a, b) if test.difference > 0 else (b, a))
        return out


@functools.lru_cache(maxsize=64)
def tukey_critical(models: int, dof: float) -> float:
    """Tukey's all-pairs critical value for ``models`` means whose standard errors have
    ``dof`` degrees of freedom (``math.inf``: known): the studentized range's ``1 - ALPHA``
    quantile over sqrt 2.

    Example:
        >>> round(tukey_critical(2, 2), 2)  # two models: the two-sided t quantile, 2 df
        4.3
        >>> round(tukey_critical(17, math.inf), 3)
        3.458
    """
    if dof < 1 or models < 2:
        return math.nan
    return float(stats.studentized_range.ppf(1 - ALPHA, models, dof)) / math.sqrt(2)


def best_set(dists: Mapping[str, np.ndarray], points: Mapping[str, Sequence[float]], *,
             higher: bool = True, examples: int = 0) -> BestSet:
    """The may-be-best set of a column (see the module).

    Args:
        dists: Per model, its bootstrap distribution over the test examples, (resamples,
            runs) (:func:`robustbnn.report.intervals.distribution`); every model on the same
            resamples of the same test points and runs.
        points: Per model, each run's value on all of its examples.
        higher: Whether a higher value is better.
        examples: The test points each run scores (the smaller class of a ranking metric);
            the examples' critical value is at least Tukey's with ``examples - 1`` degrees of
            freedom (0: infinite).

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> noise = {m: rng.normal(0, 0.01, (2000, 1)) for m in "abc"}  # one run each
        >>> found = best_set({"a": 0.9 + noise["a"], "b": 0.8 + noise["b"],
        ...                   "c": 0.895 + noise["c"]}, {"a": [0.9], "b": [0.8], "c": [0.895]})
        >>> found.groups
        (('a', 'c'), ('b',))
    """
    sign = 1.0 if higher else -1.0
    estimate = {m: float(np.mean(points[m])) for m in dists}
    order = sorted(dists, key=lambda m: -sign * estimate[m])
    runs = len(next(iter(points.values())))
    means = {m: dists[m].mean(-1) for m in order}
    pairs = list(itertools.combinations(order, 2))
    diffs = {(a, b): estimate[a] - estimate[b] for a, b in pairs}
    boot = {(a, b): means[a] - means[b] for a, b in pairs}
    se_ex = {p: float(boot[p].std(ddof=1)) if len(boot[p]) > 1 else 0.0 for p in pairs}
    # The seeds' part: the pooled run variance of all models (k (runs - 1) degrees of
    # freedom, as Tukey's test pools it), or the pair's own runs where they spread more.
    se_seed = dict.fromkeys(pairs, 0.0)
    if runs > 1:
        pooled = float(np.mean([np.var(points[m], ddof=1) for m in order]))
        for a, b in pairs:
            own = np.std(np.asarray(points[a], float) - np.asarray(points[b], float), ddof=1)
            se_seed[(a, b)] = max(math.sqrt(2 * pooled / runs), float(own) / math.sqrt(runs))
    # max-T over all pairs: the largest studentized deviation of each resample
    studentized = [np.abs(boot[p] - boot[p].mean()) / se_ex[p] for p in pairs if se_ex[p] > 0]
    tukey = tukey_critical(len(order), examples - 1 if examples > 1 else math.inf)
    c_ex = max(float(np.quantile(np.max(studentized, axis=0), 1 - ALPHA)) if studentized
               else 0.0, tukey)
    c_seed = tukey_critical(len(order), len(order) * (runs - 1)) if runs > 1 else math.nan
    tests = {}
    for p in pairs:
        seeds = 0.0 if math.isnan(c_seed) else c_seed * se_seed[p]
        tests[p] = PairTest(sign * diffs[p], se_ex[p], se_seed[p],
                            math.hypot(c_ex * se_ex[p], seeds))
    beaten = {m: set() for m in order}  # by whom
    for (a, b), test in tests.items():
        if test.separated:
            winner, loser = (a, b) if test.difference > 0 else (b, a)
            beaten[loser].add(winner)
    groups, left = [], list(order)
    while left:
        tier = [m for m in left if not beaten[m] & set(left)]
        groups.append(tuple(tier))
        left = [m for m in left if m not in tier]
    z_power = float(stats.norm.ppf(POWER))
    best = order[0]
    own = [t.margin + z_power * math.hypot(t.se_examples, t.se_seeds)
           for (a, b), t in tests.items() if best in (a, b)]
    return BestSet(tuple(groups), tests, c_ex, c_seed, statistics.median(own) if own else 0.0)
