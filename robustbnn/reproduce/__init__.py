"""``robustbnn reproduce``: each published table and figure under its own protocol.

Importing this package registers every experiment in :data:`EXPERIMENTS`.
"""

from __future__ import annotations

from robustbnn.reproduce import experiments  # noqa: F401 - registers the experiments
from robustbnn.reproduce.experiment import BUDGETS, Compare, Experiment, Figure, Run
from robustbnn.reproduce.registry import EXPERIMENTS
from robustbnn.reproduce.runner import ReproduceOptions, plan_text, reproduce

__all__ = ["BUDGETS", "EXPERIMENTS", "Compare", "Experiment", "Figure", "ReproduceOptions", "Run",
           "plan_text", "reproduce"]
