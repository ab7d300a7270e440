"""Out-of-distribution scoring: uncertainty measures, registered in ``UNCERTAINTIES``."""

from __future__ import annotations

from robustbnn.ood.energy import energy, max_logit, mean_energy, mean_max_logit
from robustbnn.ood.uncertainty import (
    BUILTIN_MEASURES,
    UNCERTAINTIES,
    Measure,
    all_measures,
    bald,
    builtin_measures,
    expected_entropy,
    max_prob,
    mean_std,
    measure,
    predictive_entropy,
    variation_ratio,
)

__all__ = [
    "BUILTIN_MEASURES",
    "UNCERTAINTIES",
    "Measure",
    "all_measures",
    "bald",
    "builtin_measures",
    "energy",
    "expected_entropy",
    "max_prob",
    "max_logit",
    "mean_energy",
    "mean_max_logit",
    "mean_std",
    "measure",
    "predictive_entropy",
    "variation_ratio",
]
