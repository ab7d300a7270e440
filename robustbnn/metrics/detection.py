"""Detection-aware robust accuracy: an adversarial input is defended when it is classified
correctly **or** the uncertainty detector flags it.

The detector flags an input when its uncertainty score (higher = more uncertain, as every
measure of :mod:`robustbnn.ood.uncertainty`) exceeds a threshold fixed on clean test data so
that at most ``fpr`` of the clean inputs are flagged (5% by default). This is the number that
says whether uncertainty defends: Carlini & Wagner, "Adversarial Examples Are Not Easily
Detected", AISec 2017 (arXiv:1705.07263); Tramèr, Carlini, Brendel & Madry, "On Adaptive
Attacks to Adversarial Example Defenses", NeurIPS 2020 (arXiv:2002.08347).

Example:
    >>> import numpy as np
    >>> clean = np.arange(100.0)                      # 100 clean scores 0 .. 99
    >>> t = threshold_at_fpr(clean, 0.05)
    >>> float((clean > t).mean())                     # 5% of the clean inputs flagged
    0.05
    >>> detection_aware_accuracy(np.array([1, 0, 0]), np.array([0.0, 99.5, 3.0]), t)
    0.6666666666666666
"""

from __future__ import annotations

import numpy as np

__all__ = ["detection_aware_accuracy", "threshold_at_fpr"]


def threshold_at_fpr(clean_scores: np.ndarray, fpr: float = 0.05) -> float:
    """The smallest clean-score quantile t with ``mean(clean_scores > t) <= fpr``.

    Raises:
        ValueError: For an empty score array or ``fpr`` outside [0, 1).
    """
    scores = np.asarray(clean_scores, dtype=np.float64)
    if scores.size == 0:
        raise ValueError("threshold_at_fpr needs at least one clean score")
    if not 0.0 <= fpr < 1.0:
        raise ValueError(f"fpr must be in [0, 1), got {fpr}")
    return float(np.quantile(scores, 1.0 - fpr, method="higher"))


def detection_aware_accuracy(correct: np.ndarray, scores: np.ndarray, threshold: float) -> float:
    """Fraction of inputs classified correctly (``correct`` truthy) or flagged
    (``scores > threshold``)."""
    correct = np.asarray(correct).astype(bool)
    flagged = np.asarray(scores, dtype=np.float64) > threshold
    if correct.shape != flagged.shape:
        raise ValueError(f"correct and scores need one shape, got {correct.shape} and "
                         f"{flagged.shape}")
    return float((correct | flagged).mean())
