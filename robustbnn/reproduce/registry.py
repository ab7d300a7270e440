"""``EXPERIMENTS``: every reproduction, by the name ``robustbnn reproduce NAME`` takes."""

from __future__ import annotations

from robustbnn.registry import Registry
from robustbnn.reproduce.experiment import Experiment

__all__ = ["EXPERIMENTS"]

EXPERIMENTS: Registry[Experiment] = Registry("experiment")
