"""The model registry. Each method is one file; adding one takes a file and an import line."""

from __future__ import annotations

from robustbnn.models.base import MODELS, BayesianModule, ModelSpec

# Registration is explicit: one import per model file, in leaderboard order.
from robustbnn.models import mlp  # noqa: E402,F401  isort: skip
from robustbnn.models import mc_dropout  # noqa: E402,F401  isort: skip
from robustbnn.models import bbalpha  # noqa: E402,F401  isort: skip
from robustbnn.models import bbb  # noqa: E402,F401  isort: skip
from robustbnn.models import bhn  # noqa: E402,F401  isort: skip
from robustbnn.models import bhn_full  # noqa: E402,F401  isort: skip
from robustbnn.models import vhn  # noqa: E402,F401  isort: skip
from robustbnn.models import mvn  # noqa: E402,F401  isort: skip
from robustbnn.models import deep_ensemble  # noqa: E402,F401  isort: skip
from robustbnn.models import laplace  # noqa: E402,F401  isort: skip
from robustbnn.models import swag  # noqa: E402,F401  isort: skip
from robustbnn.models import temperature_scaled  # noqa: E402,F401  isort: skip
from robustbnn.models import sgmcmc  # noqa: E402,F401  isort: skip
from robustbnn.models import hmc  # noqa: E402,F401  isort: skip

__all__ = ["MODELS", "BayesianModule", "ModelSpec"]
