"""``tp_bim``: the basic iterative method (iterated FGSM), registered in ``ATTACKS``.

x ← clip(proj_eps(x + α · sign(∇ₓ L))) for ``steps`` steps from ``x`` (no random start), the
gradient of the Monte Carlo objective through :func:`robustbnn.attacks.mc_input_grad`.

Norm: L-infinity. Shapes: x (B, *), y (B,) -> x_adv (B, *).

References:
    Kurakin, Goodfellow & Bengio, "Adversarial Examples in the Physical World", ICLR 2017
    workshop, arXiv:1607.02533.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import torch
from torch import Tensor

from robustbnn.attacks import ATTACKS, GradientSettings, mc_input_grad
from robustbnn.attacks.base import Attack
from robustbnn.config import NON_NEGATIVE, POSITIVE_INT, OneOf, Range


@dataclasses.dataclass(frozen=True)
class BIM(Attack):
    """Iterated FGSM in the L-infinity ball.

    Attributes:
        eps: L-infinity radius.
        step_size: α, the size of each signed step.
        steps: Number of steps.
        n_samples: Posterior samples per gradient.
        objective: ``"expected"`` (mean_s CE) or ``"predictive"`` (CE of p̄).
    """

    eps: float = 0.1
    step_size: float = 0.01
    steps: int = 10
    n_samples: int = 1
    objective: str = "expected"

    norm: ClassVar[str] = "linf"
    eps_grid: ClassVar[tuple[float, ...]] = (0.1, 0.2)
    ranges: ClassVar[dict[str, Range | OneOf]] = {
        **Attack.ranges, "step_size": NON_NEGATIVE, "steps": POSITIVE_INT,
        "objective": OneOf(("expected", "predictive"))}
    reference: ClassVar[str] = "Kurakin, Goodfellow & Bengio 2017, arXiv:1607.02533"

    def __call__(self, model: torch.nn.Module, x: Tensor, y: Tensor, *,
                 target: Tensor | int | None = None,
                 generator: torch.Generator | None = None) -> Tensor:
        """Adversarial inputs within ``eps`` of ``x`` (L-infinity) and in [0, 1]."""
        x0 = x.detach()
        lo, hi = (x0 - self.eps).clamp(0, 1), (x0 + self.eps).clamp(0, 1)
        x_adv = x0
        gradient = GradientSettings(self.n_samples, self.objective)
        for _ in range(self.steps):
            grad = mc_input_grad(model, x_adv, y, gradient, target=target, generator=generator)
            x_adv = torch.minimum(torch.maximum(x_adv + self.step_size * grad.sign(), lo), hi)
        return x_adv.detach()


ATTACKS.register("tp_bim", BIM)
