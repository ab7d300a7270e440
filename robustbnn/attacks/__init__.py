"""Attacks on Bayesian models; all input gradients go through ``_grad.mc_input_grad``."""

from __future__ import annotations

from robustbnn.attacks._grad import mc_input_grad
from robustbnn.attacks.fgsm import FGSM

__all__ = ["FGSM", "mc_input_grad"]
