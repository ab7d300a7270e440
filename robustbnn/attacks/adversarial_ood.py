"""Adversarial OOD inputs: out-of-distribution images moved within eps to look in-distribution.

A detector that separates clean noise from digits may still pass the same noise nudged by a
few grey levels (Hein, Andriushchenko & Bitterwolf, "Why ReLU Networks Yield High-Confidence
Predictions Far Away From the Training Data", CVPR 2019, arXiv:1812.05720; Meinke & Hein,
"Towards Neural Networks that Provably Know When They Don't Know", ICLR 2020,
arXiv:1909.12180). :func:`lower_uncertainty` runs L-infinity PGD with EOT on an uncertainty
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
    >>> x_adv = lower_uncertainty(net, x, measure="max_prob", eps=0.05, step_size=0.01,
    ...                           steps=3, n_samples=1, generator=torch.Generator())
    >>> bool((x_adv - x).abs().max() <= 0.05 + 1e-6), x_adv.shape
    (True, torch.Size([4, 1, 28, 28]))
"""

from __future__ import annotations

import torch
from torch import Tensor

from robustbnn.attacks._grad import _sample
from robustbnn.attacks._linf import box, project
from robustbnn.ood.uncertainty import UNCERTAINTIES

__all__ = ["lower_uncertainty"]


def lower_uncertainty(model: torch.nn.Module, x: Tensor, *, measure: str, eps: float,
                      step_size: float, steps: int, n_samples: int,
                      generator: torch.Generator | None, name: str = "model") -> Tensor:
    """Per example, the iterate of PGD-EOT descending ``measure`` with the lowest estimate.

    Starts at ``x`` itself (the clean OOD input is a candidate, so the result is never
    estimated more uncertain than it); each of ``steps`` steps draws ``n_samples`` samples
    from ``generator``.

    Raises:
        ValueError: For eps < 0, steps < 0, n_samples < 1, or ``variation_ratio`` (no
            gradient).
    """
    if eps < 0 or steps < 0 or n_samples < 1:
        raise ValueError(f"need eps >= 0, steps >= 0 and n_samples >= 1, got {eps}, {steps}, "
                         f"{n_samples}")
    if measure == "variation_ratio":
        raise ValueError("variation_ratio is piecewise constant: a gradient attack cannot "
                         "lower it")
    u_of = UNCERTAINTIES.get(measure)
    x0 = x.detach()
    lo, hi = box(x0, eps)
    shape = (-1, *[1] * (x0.ndim - 1))
    x_adv, best = x0, x0
    best_u = torch.full((x0.shape[0],), float("inf"), device=x0.device)
    for step in range(steps + 1):
        x_var = x_adv.detach().requires_grad_(step < steps)
        with torch.enable_grad():
            u = u_of(torch.softmax(_sample(model, x_var, n_samples, generator, name), dim=-1))
            better = u.detach() < best_u
            best = torch.where(better.view(shape), x_adv, best)
            best_u = torch.where(better, u.detach(), best_u)
            if step == steps:
                break
            (grad,) = torch.autograd.grad(u.sum(), x_var)
        x_adv = project(x_adv - step_size * grad.sign(), lo, hi)
    return best.detach()
