"""Tests for robustbnn.metrics.ranking: brute-force references plus scikit-learn as oracle."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from sklearn.metrics import (
    auc,
    average_precision_score,
    precision_recall_curve,
    roc_auc_score,
    roc_curve,
)

from robustbnn.metrics.ranking import (
    aupr_in,
    aupr_out,
    auroc,
    fpr_at_95_tpr,
    ood_scores_to_labels,
    roc_curve_points,
)

METRICS = [auroc, aupr_in, aupr_out, fpr_at_95_tpr, roc_curve_points]


def _pairwise_auroc(labels: np.ndarray, scores: np.ndarray) -> float:
    """AUROC by looping over every (OOD, in-distribution) pair, ties counting ½."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    total = 0.0
    for p in pos:
        for n in neg:
            total += 1.0 if p > n else 0.5 if p == n else 0.0
    return total / (len(pos) * len(neg))


def _sweep_fpr(labels: np.ndarray, scores: np.ndarray, level: float = 0.95) -> float:
    """Smallest FPR over every candidate threshold with TPR >= level, by brute force."""
    best = 1.0
    for t in np.unique(scores):
        flagged = scores >= t
        if flagged[labels == 1].mean() >= level:
            best = min(best, flagged[labels == 0].mean())
    return best


def _random_with_ties(seed: int, n: int = 200) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 2, n)
    labels[:2] = [0, 1]
    # Few distinct values (many ties), shifted so OOD scores tend to be higher.
    scores = rng.integers(0, 8, n) + labels * rng.integers(0, 3, n)
    return labels, scores.astype(float)


@pytest.mark.parametrize("seed", range(5))
def test_auroc_matches_pairwise_reference_and_sklearn(seed: int) -> None:
    labels, scores = _random_with_ties(seed)
    assert auroc(labels, scores) == pytest.approx(_pairwise_auroc(labels, scores), abs=1e-12)
    assert auroc(labels, scores) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_auroc_continuous_scores_match_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    labels = np.r_[np.zeros(300, int), np.ones(100, int)]
    scores = rng.normal(size=400) + labels
    assert auroc(labels, scores) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)


def test_auroc_perfect_reversed_and_tied() -> None:
    labels = np.array([0, 0, 0, 1, 1])
    scores = np.array([0.1, 0.2, 0.3, 0.8, 0.9])
    assert auroc(labels, scores) == 1.0
    assert auroc(labels, -scores) == 0.0
    assert auroc(labels, np.full(5, 0.7)) == 0.5


def test_auroc_is_invariant_to_monotone_transforms_and_order() -> None:
    labels, scores = _random_with_ties(7)
    perm = np.random.default_rng(0).permutation(len(labels))
    assert auroc(labels, np.exp(scores)) == pytest.approx(auroc(labels, scores), abs=1e-12)
    assert auroc(labels[perm], scores[perm]) == pytest.approx(auroc(labels, scores), abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_aupr_matches_sklearn_average_precision(seed: int) -> None:
    labels, scores = _random_with_ties(seed)
    expected_out = average_precision_score(labels, scores)
    expected_in = average_precision_score(labels, -scores, pos_label=0)
    assert aupr_out(labels, scores) == pytest.approx(expected_out, abs=1e-12)
    assert aupr_in(labels, scores) == pytest.approx(expected_in, abs=1e-12)
    assert aupr_in(labels, scores) == pytest.approx(aupr_out(1 - labels, -scores), abs=1e-12)


def test_aupr_is_step_function_not_trapezoid() -> None:
    # Ranked by score: OOD, ID, OOD. Recall steps 0 -> 1/2 -> 1/2 -> 1 at precisions 1, 1/2,
    # 2/3, so AP = 1/2·1 + 1/2·2/3 = 5/6. The trapezoid over the PR points (0,1), (1/2,1),
    # (1/2,1/2), (1,2/3) gives 1/2·1 + 1/2·(1/2 + 2/3)/2 = 19/24 instead.
    labels, scores = np.array([1, 0, 1]), np.array([0.9, 0.5, 0.1])
    assert aupr_out(labels, scores) == pytest.approx(5 / 6, abs=1e-15)
    precision, recall, _ = precision_recall_curve(labels, scores)
    assert auc(recall, precision) == pytest.approx(19 / 24, abs=1e-15)
    # In-distribution positive, most certain first: OOD(0.1), ID(0.5), OOD(0.9) -> AP = 1/2.
    assert aupr_in(labels, scores) == pytest.approx(1 / 2, abs=1e-15)


def test_aupr_ties_form_one_threshold() -> None:
    # All tied: one threshold with precision = prevalence and recall 1.
    labels = np.array([0, 1, 1, 0, 1])
    assert aupr_out(labels, np.zeros(5)) == pytest.approx(3 / 5)
    assert aupr_in(labels, np.zeros(5)) == pytest.approx(2 / 5)


@pytest.mark.parametrize("seed", range(5))
def test_fpr_at_95_tpr_matches_threshold_sweep(seed: int) -> None:
    labels, scores = _random_with_ties(seed)
    assert fpr_at_95_tpr(labels, scores) == _sweep_fpr(labels, scores)
    fpr, tpr, _ = roc_curve(labels, scores)  # OpenOOD's convention
    assert fpr_at_95_tpr(labels, scores) == pytest.approx(fpr[np.argmax(tpr >= 0.95)])


@pytest.mark.parametrize("level", [0.5, 0.8, 1.0])
def test_fpr_at_tpr_level_matches_sweep_continuous(level: float) -> None:
    rng = np.random.default_rng(1)
    labels = np.r_[np.zeros(50, int), np.ones(40, int)]
    scores = rng.normal(size=90) + labels
    assert fpr_at_95_tpr(labels, scores, tpr_level=level) == _sweep_fpr(labels, scores, level)


def test_fpr_at_95_tpr_perfect_and_reversed() -> None:
    labels = np.r_[np.zeros(10, int), np.ones(10, int)]
    scores = np.arange(20.0)
    assert fpr_at_95_tpr(labels, scores) == 0.0
    assert fpr_at_95_tpr(labels, -scores) == 1.0


def test_roc_curve_points_match_sklearn_without_dropping() -> None:
    labels, scores = _random_with_ties(3)
    fpr, tpr, thr = roc_curve_points(labels, scores)
    ref_fpr, ref_tpr, ref_thr = roc_curve(labels, scores, drop_intermediate=False)
    np.testing.assert_allclose(fpr, ref_fpr)
    np.testing.assert_allclose(tpr, ref_tpr)
    np.testing.assert_array_equal(thr, ref_thr)
    assert len(thr) == len(np.unique(scores)) + 1


def test_ood_scores_to_labels() -> None:
    labels, scores = ood_scores_to_labels(np.array([0.1, 0.2, 0.3]), [0.9, 0.8])
    np.testing.assert_array_equal(labels, [0, 0, 0, 1, 1])
    np.testing.assert_array_equal(scores, [0.1, 0.2, 0.3, 0.9, 0.8])
    assert auroc(labels, scores) == 1.0
    with pytest.raises(ValueError, match=r"scores_out must be 1-D, got shape \(1, 2\)"):
        ood_scores_to_labels([0.1], [[0.9, 0.8]])


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize(
    ("labels", "scores", "match"),
    [
        ([0, 0, 0], [0.1, 0.2, 0.3], r"only one class \(0\).*both in-distribution \(0\)"),
        ([1, 1], [0.1, 0.2], r"only one class \(1\)"),
        ([], [], r"no examples"),
        ([0, 1, 1], [0.1, np.nan, 0.3], r"finite.*\[nan\] at index \[1\]"),
        ([0, 1, 1], [0.1, np.inf, -np.inf], r"2 non-finite value\(s\) \[inf, -inf\]"),
        ([0, 1, 1], [0.1, 0.2], r"same length, got 3 and 2"),
        ([[0, 1], [1, 0]], [[0.1, 0.2], [0.3, 0.4]], r"labels must be 1-D, got shape \(2, 2\)"),
        ([0, 1], [[0.1, 0.2]], r"scores must be 1-D, got shape \(1, 2\)"),
        ([0, 1, 2, -1], [0.1, 0.2, 0.3, 0.4], r"labels must be 0 \(in-distribution\) or 1.*-1, 2"),
        ([0.0, 1.0, np.nan], [0.1, 0.2, 0.3], r"labels must be 0 .* found \[nan\]"),
        (["a", "b"], [0.1, 0.2], r"labels must be 0 or 1, got dtype <U1"),
    ],
)
def test_invalid_inputs_raise(
    metric: Callable[..., object], labels: list, scores: list, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        metric(labels, scores)


def test_boolean_labels_are_accepted() -> None:
    labels = np.array([False, True, True, False])
    scores = np.array([0.2, 0.9, 0.4, 0.3])
    assert auroc(labels, scores) == auroc(labels.astype(int), scores) == 1.0


def test_invalid_tpr_level_raises() -> None:
    with pytest.raises(ValueError, match=r"tpr_level must be in \(0, 1\], got 0"):
        fpr_at_95_tpr([0, 1], [0.1, 0.2], tpr_level=0)
