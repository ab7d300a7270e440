"""Metrics: OOD ranking metrics (NumPy) and classification metrics (torch)."""

from __future__ import annotations

from robustbnn.metrics.classification import (
    accuracy,
    ece,
    log_mean_exp,
    log_predictive_probs,
    nll,
    predictive_probs,
)
from robustbnn.metrics.ranking import (
    aupr_in,
    aupr_out,
    auroc,
    fpr_at_95_tpr,
    ood_scores_to_labels,
    roc_curve_points,
)

__all__ = [
    "accuracy",
    "aupr_in",
    "aupr_out",
    "auroc",
    "ece",
    "fpr_at_95_tpr",
    "log_mean_exp",
    "log_predictive_probs",
    "nll",
    "ood_scores_to_labels",
    "predictive_probs",
    "roc_curve_points",
]
