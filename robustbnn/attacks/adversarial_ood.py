"""Adversarial OOD inputs: out-of-distribution images moved within eps to look in-distribution.

A detector that separates clean noise from digits may still pass the same noise nudged by a
few grey levels (Hein, Andriushchenko & Bitterwolf, "Why ReLU Networks Yield High-Confidence
Predictions Far Away From the Training Data", CVPR 2019, arXiv:1812.05720; Meinke & Hein,
"Towards Neural Networks that Provably Know When They Don't Know", ICLR 2020,
arXiv:1909.12180). :class:`LowerUncertainty` runs L-infinity PGD with EOT on an uncertainty
measure u: every step draws ``n_samples`` posterior samples, estimates u(x) (higher = more
uncertain) and steps against its gradient's sign; per example it returns the iterate with the
lowest estimated u. The worst-case OOD AUROC is then the AUROC of the clean in-distribution
scores against the scores of these inputs, evaluated with fresh samples.

Shapes: x (B, *) in [0, 1] -> x_adv (B, *). Nothing switches the module mode.

Example:
    >>> import torch
    >>> from robustbnn.models import MODELS
    >>> spec = MODELS.get("mlp")
    >>> net = spec.build(spec.config(hidden=(16,)), (1, 28, 28), 10,
    ...                  torch.Generator().manual_seed(0))
    >>> x = torch.rand(4, 1, 28, 28)
    >>> attack = LowerUncertainty(measure="max_prob", eps=0.05, step_size=0.01, steps=3,
    ...                           n_samples=1)
    >>> x_adv = attack(net, x, generator=torch.Generator())
    >>> bool((x_adv - x).abs().max() <= 0.05 + 1e-6), x_adv.shape
    (True, torch.Size([4, 1, 28, 28]))
"""

from __future__ import annotations

import dataclasses

import torch
from torch import Tensor

from robustbnn.attacks._grad import _sample
from robustbnn.attacks._linf import box, project
from robustbnn.contract.checked import checked
from robustbnn.ood.uncertainty import UNCERTAINTIES

__all__ = ["LowerUncertainty"]


@dataclasses.dataclass(frozen=True)
class LowerUncertainty:
    """L-infinity PGD-EOT descending an uncertainty measure; per example, the lowest iterate.

    Starts at ``x`` itself (the clean OOD input is a candidate, so the result is never
    estimated more uncertain than it); each of ``steps`` steps draws ``n_samples`` samples
    from the generator.

    Attributes:
        measure: The uncertainty measure u to lower (a name in ``UNCERTAINTIES``).
        eps: L-infinity radius.
        step_size: Size of each signed step.
        steps: Steps after the start.
        n_samples: S_attack, posterior samples per step.

    Raises:
        ValueError: For eps < 0, steps < 0, n_samples < 1, or ``variation_ratio`` (no
            gradient).
    """

    measure: str
    eps: float
    step_size: float
    steps: int
    n_samples: int

    def __post_init__(self) -> None:
        if self.eps < 0 or self.steps < 0 or self.n_samples < 1:
            raise ValueError(f"need eps >= 0, steps >= 0 and n_samples >= 1, got {self.eps}, "
                             f"{self.steps}, {self.n_samples}")
        if self.measure == "variation_ratio":
            raise ValueError("variation_ratio is piecewise constant: a gradient attack cannot "
                             "lower it")

    def __call__(self, model: torch.nn.Module, x: Tensor, *,
                 generator: torch.Generator | None = None) -> Tensor:
        """Per example, the iterate with the lowest estimate of ``measure``, shape of ``x``.

        Args:
            model: A registry model, checked at the call.
            x: OOD inputs in [0, 1], shape (B, *).
            generator: Source of every posterior sample.
        """
        model = checked(model)
        u_of = UNCERTAINTIES.get(self.measure)
        x0 = x.detach()
        lo, hi = box(x0, self.eps)
        shape = (-1, *[1] * (x0.ndim - 1))
        x_adv, best = x0, x0
        best_u = torch.full((x0.shape[0],), float("inf"), device=x0.device)
        for step in range(self.steps + 1):
            x_var = x_adv.detach().requires_grad_(step < self.steps)
            with torch.enable_grad():
                logits = _sample(model, x_var, self.n_samples, generator)  # (S, B, C)
                u = u_of(torch.softmax(logits, dim=-1))
                better = u.detach() < best_u
                best = torch.where(better.view(shape), x_adv, best)
                best_u = torch.where(better, u.detach(), best_u)
                if step == self.steps:
                    break
                (grad,) = torch.autograd.grad(u.sum(), x_var)
            x_adv = project(x_adv - self.step_size * grad.sign(), lo, hi)
        return best.detach()
