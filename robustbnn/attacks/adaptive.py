"""The detector-aware (adaptive) attack: PGD-EOT that also hides from an uncertainty detector.

An attacker who knows the defence flags uncertain inputs does not stop at a misclassification:
it looks for a misclassified input the detector passes (Carlini & Wagner, "Adversarial
Examples Are Not Easily Detected", AISec 2017, arXiv:1705.07263; Tramèr, Carlini, Brendel &
Madry, "On Adaptive Attacks to Adversarial Example Defenses", NeurIPS 2020,
arXiv:2002.08347). :class:`DetectorAwarePGD` runs the two-phase schedule per example: while
the MC prediction (of this step's ``n_samples`` attack samples) is still right it ascends the
EOT cross-entropy, (1/S) Σ_s CE(f_s(x), y); once wrong it descends the uncertainty u(x) of the
same samples (CE(y) − λ·u with λ → ∞ there), and returns, per example, the misclassified
iterate (by ``margin``) with the lowest u it saw (the last iterate when none was
misclassified). The detector's threshold is not needed: the lowest u is the best the attacker
can do against any threshold.

u is one of the differentiable measures of :mod:`robustbnn.ood.uncertainty`
(:data:`DIFFERENTIABLE_MEASURES`); ``variation_ratio`` is piecewise constant and cannot be
attacked by gradients, and ``mean_std`` is left to the same code path by name if wanted.

Norm: L-infinity, x in [0, 1]. Shapes: x (B, *), y (B,) -> x_adv (B, *). Nothing switches the
module mode; every draw comes from ``generator``.

Example:
    >>> import torch
    >>> from robustbnn.models import MODELS
    >>> spec = MODELS.get("mc_dropout")
    >>> net = spec.build(spec.config(hidden=(16,)), (1, 28, 28), 10,
    ...                  torch.Generator().manual_seed(0))
    >>> x, y = torch.rand(3, 1, 28, 28), torch.tensor([0, 1, 2])
    >>> attack = DetectorAwarePGD(eps=0.1, step_size=0.02, steps=3, n_samples=2)
    >>> x_adv = attack(net, x, y, generator=torch.Generator().manual_seed(0))
    >>> bool((x_adv - x).abs().max() <= 0.1 + 1e-6), x_adv.shape
    (True, torch.Size([3, 1, 28, 28]))
"""

from __future__ import annotations

import dataclasses

import torch
from torch import Tensor

from robustbnn.attacks._grad import _sample, mc_loss
from robustbnn.attacks._linf import box, project, random_start
from robustbnn.contract.checked import checked
from robustbnn.ood.uncertainty import UNCERTAINTIES

__all__ = ["DIFFERENTIABLE_MEASURES", "DetectorAwarePGD"]

# The measures an adaptive attack differentiates (Carlini & Wagner's detector-aware loss).
DIFFERENTIABLE_MEASURES = ("predictive_entropy", "expected_entropy", "bald", "max_prob")


@dataclasses.dataclass(frozen=True)
class DetectorAwarePGD:
    """Two-phase L-infinity PGD-EOT against the classifier and an uncertainty detector.

    Attributes:
        eps: L-infinity radius.
        step_size: Size of each signed step.
        steps: Steps (each draws ``n_samples`` fresh posterior samples).
        n_samples: S_attack, posterior samples per step.
        measure: The detector's uncertainty measure (a name in ``UNCERTAINTIES``).
        random_start: Start uniformly in the eps-ball (else at ``x``).
        margin: An input counts as misclassified (phase two) when the largest wrong-class
            probability of the step's MC predictive exceeds the true class's by more than
            this. The estimate comes from ``n_samples`` draws; without a margin, phase two
            keeps inputs that a fresh evaluation classifies correctly. Measured on a small
            MC-dropout net (mnist5k, eps 0.1, 40 steps, S = 8, 150 points, 5% FPR):
            detection-aware robust accuracy against predictive entropy .253 / .253 / .287 at
            margin 0 / 0.2 / 0.4, against BALD .300 / .273 / .293 (non-adaptive: .307).
    """

    eps: float = 0.1
    step_size: float = 0.01
    steps: int = 100
    n_samples: int = 16
    measure: str = "predictive_entropy"
    random_start: bool = True
    margin: float = 0.2

    def __post_init__(self) -> None:
        if self.eps < 0 or self.steps < 0 or self.n_samples < 1:
            raise ValueError(f"need eps >= 0, steps >= 0 and n_samples >= 1, got {self.eps}, "
                             f"{self.steps}, {self.n_samples}")
        if self.measure == "variation_ratio":
            raise ValueError("variation_ratio is piecewise constant: a gradient attack cannot "
                             f"lower it; use one of {list(DIFFERENTIABLE_MEASURES)}")
        UNCERTAINTIES.get(self.measure)

    def __call__(self, model: torch.nn.Module, x: Tensor, y: Tensor, *,
                 generator: torch.Generator | None = None) -> Tensor:
        """The misclassified iterate with the lowest uncertainty per example (shape of ``x``).

        Args:
            model: A registry model, checked at the call.
            x: Inputs in [0, 1], shape (B, *).
            y: True labels, shape (B,).
            generator: Source of the random start and of every posterior sample.
        """
        model = checked(model)
        u_of = UNCERTAINTIES.get(self.measure)
        x0 = x.detach()
        lo, hi = box(x0, self.eps)
        x_adv = random_start(x0, self.eps, lo, hi, generator) if self.random_start else x0
        shape = (-1, *[1] * (x0.ndim - 1))
        best = x_adv
        best_u = torch.full((x0.shape[0],), float("inf"), device=x0.device)
        for step in range(self.steps + 1):
            x_var = x_adv.detach().requires_grad_(True)
            with torch.enable_grad():
                logits = _sample(model, x_var, self.n_samples, generator)  # (S, B, C)
                probs = torch.softmax(logits, dim=-1)
                u = u_of(probs)  # (B,)
                mean = probs.detach().mean(0)  # (B, C)
                true = mean.gather(-1, y[:, None]).squeeze(-1)
                other = mean.scatter(-1, y[:, None], -1.0).amax(-1)
                wrong = other - true > self.margin
                better = wrong & (u.detach() < best_u)
                best = torch.where(better.view(shape), x_adv, best)
                best_u = torch.where(better, u.detach(), best_u)
                if step == self.steps:
                    break
                ce = mc_loss(logits, y, "expected", reduction="none")
                objective = torch.where(wrong, -u, ce).sum()
                (grad,) = torch.autograd.grad(objective, x_var)
            x_adv = project(x_adv + self.step_size * grad.sign(), lo, hi)
        found = torch.isfinite(best_u).view(shape)
        return torch.where(found, best, x_adv).detach()
