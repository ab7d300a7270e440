"""Detection-aware robust accuracy and the clean-FPR threshold, against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from robustbnn.metrics.detection import detection_aware_accuracy, threshold_at_fpr


@pytest.mark.parametrize("fpr", [0.0, 0.01, 0.05, 0.2])
def test_threshold_flags_at_most_fpr_and_is_the_smallest(fpr: float) -> None:
    clean = np.random.default_rng(0).normal(size=997)
    t = threshold_at_fpr(clean, fpr)
    assert (clean > t).mean() <= fpr
    lower = clean[clean < t]  # any smaller clean value as threshold flags more than fpr
    if len(lower):
        assert (clean > lower.max()).mean() > fpr


def test_threshold_with_ties_flags_nothing_beyond_the_tie() -> None:
    assert threshold_at_fpr(np.zeros(50), 0.05) == 0.0  # a constant score flags nothing


def test_detection_aware_accuracy_brute_force() -> None:
    rng = np.random.default_rng(1)
    correct, scores = rng.random(200) < 0.3, rng.normal(size=200)
    t = 0.8
    brute = sum(bool(c) or s > t for c, s in zip(correct, scores, strict=True)) / 200
    assert detection_aware_accuracy(correct, scores, t) == pytest.approx(brute)


def test_errors() -> None:
    with pytest.raises(ValueError, match="at least one"):
        threshold_at_fpr(np.array([]))
    with pytest.raises(ValueError, match=r"fpr must be in \[0, 1\)"):
        threshold_at_fpr(np.ones(3), 1.0)
    with pytest.raises(ValueError, match="one shape"):
        detection_aware_accuracy(np.ones(3), np.ones(4), 0.0)
