"""robustbnn: adversarial robustness and OOD uncertainty benchmarks for Bayesian neural nets.

Importing the package loads nothing else (but :mod:`robustbnn.first_run`, a logging filter
of the standard library's): the registries are loaded on first use
(``robustbnn.MODELS`` imports the models), so ``from robustbnn import __version__`` is cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from robustbnn.first_run import quiet_first_run

__version__ = "0.1.0"

# Another library's first-run notice becomes a line of ours (robustbnn/first_run.py): installed
# here, before anything can import matplotlib, in every process that imports robustbnn.
quiet_first_run()

# The registries the package root offers, and the module each one lives in (loaded on use).
_LAZY = {"ATTACKS": "robustbnn.attacks", "DATASETS": "robustbnn.data",
         "MODELS": "robustbnn.models", "UNCERTAINTIES": "robustbnn.ood"}

if TYPE_CHECKING:
    from robustbnn.attacks import ATTACKS
    from robustbnn.data import DATASETS
    from robustbnn.models import MODELS
    from robustbnn.ood import UNCERTAINTIES

__all__ = ["ATTACKS", "DATASETS", "MODELS", "UNCERTAINTIES", "__version__"]


def __getattr__(name: str) -> Any:
    """Load a registry on first use (PEP 562)."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'robustbnn' has no attribute {name!r}")
