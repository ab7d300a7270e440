"""Ranking metrics for out-of-distribution detection.

Functions named ``*_score`` in scikit-learn return a value to maximise; every function here
returns a value whose direction is fixed in ``report/schema.py::HIGHER_IS_BETTER`` (higher is
better for ``auroc``, ``aupr_in``, ``aupr_out``; lower for ``fpr_at_95_tpr``).

Conventions, pinned once here (docs/pitfalls.md §1.10):

* ``labels`` are 0 for in-distribution and 1 for OOD, and **OOD is the positive class**.
* ``scores`` are uncertainties: **higher means more OOD**. Feed the measures of
  :mod:`robustbnn.ood.uncertainty` unchanged; negate confidences first.
* Tied scores form a single threshold, so a tie between an OOD and an in-distribution
  example counts ½ in ``auroc``.
* AUPR is average precision, the step sum Σ_n (R_n - R_{n-1}) P_n over thresholds as in
  scikit-learn's ``average_precision_score`` and the BHN code, **not** the trapezoid rule
  used by OpenOOD and pytorch-ood. ``aupr_in`` takes in-distribution as positive (BHN's
  PR(+)), ``aupr_out`` takes OOD as positive (BHN's PR(-)).

BHN (after Hendrycks & Gimpel) ranks in-distribution positive by confidence; by symmetry
that AUROC equals ``auroc`` here. Pure NumPy; scikit-learn is only a test oracle.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "aupr_in",
    "aupr_out",
    "auroc",
    "fpr_at_95_tpr",
    "ood_scores_to_labels",
    "roc_curve_points",
]


def _check_binary(labels: ArrayLike, scores: ArrayLike) -> tuple[NDArray, NDArray]:
    """Validate and convert to (int64 labels, float64 scores), raising ValueError."""
    labels, scores = np.asarray(labels), np.asarray(scores)
    for name, a in (("labels", labels), ("scores", scores)):
        if a.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    if labels.shape != scores.shape:
        raise ValueError(
            f"labels and scores must have the same length, got {len(labels)} and {len(scores)}"
        )
    if scores.dtype.kind not in "biuf":
        raise ValueError(f"scores must be real numbers, got dtype {scores.dtype}")
    scores = scores.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(scores))
    if bad.size:
        raise ValueError(
            f"scores must be finite; found {bad.size} non-finite value(s) "
            f"{scores[bad[:5]].tolist()} at index {bad[:5].tolist()}"
        )
    if labels.dtype.kind not in "biuf":
        raise ValueError(f"labels must be 0 or 1, got dtype {labels.dtype}")
    other = np.setdiff1d(np.unique(labels), [0, 1])  # NaN is caught here too
    if other.size:
        raise ValueError(
            f"labels must be 0 (in-distribution) or 1 (OOD); found {other[:5].tolist()}"
        )
    labels = labels.astype(np.int64)
    present = np.unique(labels).tolist()
    if len(present) < 2:
        only = f"only one class ({present[0]})" if present else "no examples"
        raise ValueError(
            f"labels contain {only}; need both in-distribution (0) and OOD (1) examples"
        )
    return labels, scores


def _binary_clf_curve(labels: NDArray, scores: NDArray) -> tuple[NDArray, NDArray, NDArray]:
    """False and true positive counts at each distinct score, thresholds in decreasing order."""
    order = np.argsort(scores, kind="mergesort")[::-1]
    scores, labels = scores[order], labels[order]
    # The last index of each run of tied scores: tied scores form one threshold.
    last = np.r_[np.flatnonzero(np.diff(scores)), labels.size - 1]
    tps = np.cumsum(labels)[last]
    fps = last + 1 - tps
    return fps, tps, scores[last]


def roc_curve_points(labels: ArrayLike, scores: ArrayLike) -> tuple[NDArray, NDArray, NDArray]:
    """ROC curve points, one per distinct score, for AUROC figures.

    Example ``i`` is flagged OOD at threshold ``t`` when ``scores[i] >= t``.

    Args:
        labels: 0 for in-distribution, 1 for OOD, shape (N,).
        scores: Uncertainty scores, higher means more OOD, shape (N,).

    Returns:
        ``(fpr, tpr, thresholds)``, each of shape (K + 1,) for K distinct scores; the first
        point is (0, 0) at threshold ``+inf``, thresholds decrease, the last point is (1, 1).

    Raises:
        ValueError: Unless both are 1-D, of equal length and finite, with labels in {0, 1}
            and both classes present.

    Example:
        >>> fpr, tpr, thr = roc_curve_points([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
        >>> fpr.tolist(), tpr.tolist(), thr.tolist()
        ([0.0, 0.0, 0.5, 0.5, 1.0], [0.0, 0.5, 0.5, 1.0, 1.0], [inf, 0.8, 0.4, 0.35, 0.1])
    """
    fps, tps, thresholds = _binary_clf_curve(*_check_binary(labels, scores))
    return np.r_[0.0, fps / fps[-1]], np.r_[0.0, tps / tps[-1]], np.r_[np.inf, thresholds]


def auroc(labels: ArrayLike, scores: ArrayLike) -> float:
    """Area under the ROC curve, OOD (label 1) positive, ties counting ½.

    Equals the probability that a random OOD example scores above a random
    in-distribution one, plus half the probability of a tie.

    Args:
        labels: 0 for in-distribution, 1 for OOD, shape (N,).
        scores: Uncertainty scores, higher means more OOD, shape (N,).

    Returns:
        AUROC in [0, 1]; 0.5 is chance.

    Raises:
        ValueError: Unless both are 1-D, of equal length and finite, with labels in {0, 1}
            and both classes present.

    Example:
        >>> auroc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
        0.75
        >>> auroc([0, 1], [0.5, 0.5])
        0.5
    """
    fpr, tpr, _ = roc_curve_points(labels, scores)
    # Trapezoids on the ROC curve: a tied block is a diagonal segment, worth ½ per pair.
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1])) / 2)


def _average_precision(labels: NDArray, scores: NDArray) -> float:
    """Σ_n (R_n - R_{n-1}) P_n over thresholds, labels 1 positive; inputs already checked."""
    fps, tps, _ = _binary_clf_curve(labels, scores)
    precision = tps / (tps + fps)
    recall = tps / tps[-1]
    return float(np.sum(np.diff(recall, prepend=0.0) * precision))


def aupr_out(labels: ArrayLike, scores: ArrayLike) -> float:
    """Average precision with OOD (label 1) as the positive class (BHN's PR(-)).

    The step-function sum Σ_n (R_n - R_{n-1}) P_n over decreasing thresholds, as
    scikit-learn's ``average_precision_score``; not the trapezoid rule.

    Args:
        labels: 0 for in-distribution, 1 for OOD, shape (N,).
        scores: Uncertainty scores, higher means more OOD, shape (N,).

    Returns:
        Average precision in [0, 1]; chance level is the fraction of OOD examples.

    Raises:
        ValueError: Unless both are 1-D, of equal length and finite, with labels in {0, 1}
            and both classes present.

    Example:
        >>> aupr_out([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])  # (1/2)·1 + (1/2)·(2/3)
        0.8333333333333333
    """
    return _average_precision(*_check_binary(labels, scores))


def aupr_in(labels: ArrayLike, scores: ArrayLike) -> float:
    """Average precision with in-distribution (label 0) as the positive class (BHN's PR(+)).

    Computed as :func:`aupr_out` of ``1 - labels`` ranked by ``-scores``, i.e. the most
    certain examples first.

    Args:
        labels: 0 for in-distribution, 1 for OOD, shape (N,).
        scores: Uncertainty scores, higher means more OOD, shape (N,).

    Returns:
        Average precision in [0, 1]; chance is the fraction of in-distribution examples.

    Raises:
        ValueError: Unless both are 1-D, of equal length and finite, with labels in {0, 1}
            and both classes present.

    Example:
        >>> aupr_in([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])  # (1/2)·1 + (1/2)·(2/3)
        0.8333333333333333
    """
    labels, scores = _check_binary(labels, scores)
    return _average_precision(1 - labels, -scores)


def fpr_at_95_tpr(labels: ArrayLike, scores: ArrayLike, *, tpr_level: float = 0.95) -> float:
    """False positive rate on in-distribution data when 95% of OOD data is detected.

    Convention: example i is flagged OOD when ``scores[i] >= t``. Of the thresholds t taken
    from the scores, use the **largest** whose TPR (fraction of OOD flagged) is at least
    ``tpr_level``, and return the fraction of in-distribution examples flagged there: the
    smallest FPR with TPR ≥ ``tpr_level``, without interpolation, tied scores moving
    together. This is OpenOOD's ``fpr[argmax(tpr >= 0.95)]`` on scikit-learn's
    ``roc_curve``; the Hendrycks & Gimpel code takes the recall *closest* to 0.95 instead.

    Args:
        labels: 0 for in-distribution, 1 for OOD, shape (N,).
        scores: Uncertainty scores, higher means more OOD, shape (N,).
        tpr_level: Required fraction of OOD examples detected, in (0, 1].

    Returns:
        FPR in [0, 1]; lower is better.

    Raises:
        ValueError: If the inputs are not 1-D, of equal length, finite, with labels in
            {0, 1} and both classes present, or ``tpr_level`` is not in (0, 1].

    Example:
        >>> labels = [0] * 10 + [1] * 20
        >>> scores = list(range(10)) + list(range(9, 29))  # one OOD ties the top ID score
        >>> fpr_at_95_tpr(labels, scores)  # t = 10 catches 19/20 OOD and no ID
        0.0
        >>> fpr_at_95_tpr(labels, scores, tpr_level=1.0)  # t = 9 also flags one ID
        0.1
    """
    if not 0 < tpr_level <= 1:
        raise ValueError(f"tpr_level must be in (0, 1], got {tpr_level!r}")
    fpr, tpr, _ = roc_curve_points(labels, scores)
    return float(fpr[np.argmax(tpr >= tpr_level)])


def ood_scores_to_labels(
    scores_in: ArrayLike, scores_out: ArrayLike
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Concatenate in-distribution (label 0) and OOD (label 1) scores.

    Args:
        scores_in: Scores of in-distribution examples, shape (N_in,).
        scores_out: Scores of OOD examples, shape (N_out,).

    Returns:
        ``(labels, scores)``, each of shape (N_in + N_out,), in-distribution first.

    Raises:
        ValueError: If either input is not 1-D.

    Example:
        >>> labels, scores = ood_scores_to_labels([0.1, 0.2], [0.9])
        >>> labels.tolist(), scores.tolist()
        ([0, 0, 1], [0.1, 0.2, 0.9])
    """
    scores_in, scores_out = np.asarray(scores_in), np.asarray(scores_out)
    for name, a in (("scores_in", scores_in), ("scores_out", scores_out)):
        if a.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    labels = np.r_[np.zeros(scores_in.size, np.int64), np.ones(scores_out.size, np.int64)]
    return labels, np.r_[scores_in, scores_out].astype(np.float64)
