"""robustbnn: adversarial robustness and OOD uncertainty benchmarks for Bayesian neural nets."""

from __future__ import annotations

__version__ = "0.1.0"

from robustbnn.attacks import ATTACKS  # noqa: E402
from robustbnn.data import DATASETS  # noqa: E402
from robustbnn.models import MODELS  # noqa: E402
from robustbnn.ood import UNCERTAINTIES  # noqa: E402

__all__ = ["ATTACKS", "DATASETS", "MODELS", "UNCERTAINTIES", "__version__"]
