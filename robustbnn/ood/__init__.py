"""Out-of-distribution scoring: uncertainty measures, registered in ``UNCERTAINTIES``."""

from __future__ import annotations

from robustbnn.ood.uncertainty import (
    UNCERTAINTIES,
    all_measures,
    bald,
    expected_entropy,
    max_prob,
    mean_std,
    predictive_entropy,
    variation_ratio,
)

__all__ = [
    "UNCERTAINTIES",
    "all_measures",
    "bald",
    "expected_entropy",
    "max_prob",
    "mean_std",
    "predictive_entropy",
    "variation_ratio",
]
