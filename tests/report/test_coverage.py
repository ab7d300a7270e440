"""Coverage of the intervals and family-wise error of the "may be best" set, by simulation
(issue 48): 3 runs that score the same test points, the seeds' standard error 0, 1 and 4 times
the examples' (tests/report/coverage_sim.py).

Each estimate is a proportion of ``reps`` simulations, with Monte Carlo standard error
``sqrt(p (1 - p) / reps)`` (about 0.011 at 0.95 and 400 simulations); the simulations are
seeded, so these are the numbers this code gives, every run (2026-12-05; ``pytest -n 0
--log-cli-level=INFO tests/report/test_coverage.py`` logs them):

=========  ======  ======  ======
coverage   0x      1x      4x
=========  ======  ======  ======
accuracy   0.960   0.953   0.963
nll        0.933   0.978   0.970
auroc      0.938   0.983   0.935
ece        0.943   0.983   0.945
=========  ======  ======  ======

Family-wise error of the may-be-best set, 17 equal models on 100 points: 0.060 with one run
(1,000 simulations, Monte Carlo standard error 0.007: not shown to be at most 0.05), 0.010
and 0.028 with 3 runs at 1x and 4x (400 simulations each).
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from robustbnn.report.best_set import best_set
from robustbnn.report.intervals import distribution, interval, point
from tests.report.coverage_sim import KINDS, equal_models

log = logging.getLogger(__name__)
FLOOR = 0.93  # issue 48: at least 0.93 at 0x, 1x and 4x
LEVEL = 0.05


@pytest.mark.bench
@pytest.mark.parametrize("ratio", [0, 1, 4])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_interval_covers_seeds_and_examples(kind: str, ratio: int) -> None:
    reps = 400
    rng = np.random.default_rng([48, ratio, sorted(KINDS).index(kind)])
    covered = 0
    for _ in range(reps):
        sample, truth = KINDS[kind](rng, ratio)
        lo, hi = interval(sample, 1000, metric=kind)
        covered += lo <= truth <= hi
    rate = covered / reps
    mc = math.sqrt(rate * (1 - rate) / reps)
    found = (f"{kind}, seed error {ratio}x the examples', 3 runs: coverage {rate:.4f} "
             f"± {mc:.4f} (Monte Carlo, {reps} simulations)")
    log.info(found)
    assert rate >= FLOOR, found


@pytest.mark.bench
@pytest.mark.parametrize(("ratio", "runs", "reps"), [(0, 1, 1000), (1, 3, 400), (4, 3, 400)])
def test_the_may_be_best_set_keeps_all_of_17_equal_models(ratio: int, runs: int,
                                                          reps: int) -> None:
    # A global null: 17 models of the same true accuracy on the board's 100 attacked points.
    # Leaving any of them out of the set is a family-wise error; at most 5%, up to the
    # Monte Carlo error of the estimate (the test fails when the estimate is more than two
    # standard errors above 0.05).
    rng = np.random.default_rng([48, 17, ratio, runs])
    errors = 0
    for _ in range(reps):
        models = equal_models(rng, ratio, runs=runs)
        dists = {m: distribution(s, 1000) for m, s in models.items()}
        points = {m: [point(c[0]) for c in s] for m, s in models.items()}
        errors += len(best_set(dists, points, examples=100).groups[0]) < len(models)
    rate = errors / reps
    mc = math.sqrt(LEVEL * (1 - LEVEL) / reps)
    found = (f"17 equal models, {runs} run(s), seed error {ratio}x: family-wise error "
             f"{rate:.4f} (Monte Carlo standard error at 0.05: {mc:.4f}, {reps} simulations)")
    log.info(found)
    assert rate <= LEVEL + 2 * mc, found
