"""How many seeds separate a top group: the search against best_set's own margin."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robustbnn.report.best_set import PairTest, best_set, tukey_critical
from robustbnn.report.seeds_needed import runs_to_separate


def _margin(test: PairTest, runs_then: int, runs: int, models: int, c_ex: float) -> float:
    per_run = test.se_seeds * math.sqrt(runs_then)
    return math.hypot(c_ex * test.se_examples,
                      tukey_critical(models, models * (runs - 1)) * per_run / math.sqrt(runs))


@pytest.mark.parametrize(("gap", "se_ex", "se_seeds"), [(0.05, 0.005, 0.03), (0.02, 0.001, 0.01),
                                                        (0.1, 0.02, 0.05)])
def test_the_runs_found_are_the_first_that_separate(gap, se_ex, se_seeds) -> None:
    test = PairTest(gap, se_ex, se_seeds, margin=1.0)
    runs = runs_to_separate(test, runs=3, models=17, c_examples=3.5)
    assert runs is not None and runs > 3
    assert gap > _margin(test, 3, runs, 17, 3.5)
    assert gap <= _margin(test, 3, runs - 1, 17, 3.5)


def test_no_seeds_separate_a_gap_the_examples_alone_cover() -> None:
    assert runs_to_separate(PairTest(0.01, 0.004, 1e-6, 1.0), runs=3, models=17,
                            c_examples=3.5) is None


def test_a_pair_best_set_already_separates_needs_no_more_runs() -> None:
    rng = np.random.default_rng(0)
    points = {"a": [0.90, 0.91, 0.92], "b": [0.70, 0.71, 0.69]}
    dists = {m: np.asarray(p) + rng.normal(0, 0.002, (2000, 3)) for m, p in points.items()}
    found = best_set(dists, points)
    test = found.pairs[("a", "b")]
    assert test.separated
    assert runs_to_separate(test, runs=3, models=2, c_examples=found.c_examples) == 3
