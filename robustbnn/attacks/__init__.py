"""Attacks on Bayesian models, registered in ``ATTACKS``; all gradients go through ``_grad``.

Every attack is a frozen dataclass of hyper-parameters called as
``attack(model, x, y, *, target=None, generator=None) -> x_adv``; it checks the model's
contract at the call (:func:`robustbnn.contract.checked.checked`: a model the harness has
wrapped is named by its registry name, a raw one by its class). The registry maps each
attack's file name to its class; adding an attack takes one file and one line here.
"""

from __future__ import annotations

from robustbnn.attacks import sanity
from robustbnn.attacks._grad import GradientSettings, attack_labels, mc_input_grad, mc_loss
from robustbnn.attacks.fgsm import EPS_GRIDS, FGSM, PRESETS, fgsm_grid
from robustbnn.attacks.pgd import PGD
from robustbnn.attacks.targeted_ifgsm import TargetedIFGSM, exclude_target, targeted_curve
from robustbnn.registry import Registry

ATTACKS = Registry[type]("attack")
ATTACKS.register("fgsm", FGSM)
ATTACKS.register("targeted_ifgsm", TargetedIFGSM)
ATTACKS.register("pgd", PGD)

__all__ = [
    "ATTACKS",
    "EPS_GRIDS",
    "FGSM",
    "GradientSettings",
    "PGD",
    "PRESETS",
    "TargetedIFGSM",
    "attack_labels",
    "exclude_target",
    "fgsm_grid",
    "mc_input_grad",
    "mc_loss",
    "sanity",
    "targeted_curve",
]
