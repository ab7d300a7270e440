"""robustbnn: adversarial robustness and OOD uncertainty benchmarks for Bayesian neural networks."""

from __future__ import annotations

__version__ = "0.1.0"
