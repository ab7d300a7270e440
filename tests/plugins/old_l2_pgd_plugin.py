"""An attack plug-in of the previous release, kept as it was (registered: ``old_pgd_l2``).

This is ``examples/l2_pgd_plugin.py`` of the release before ``GradientSettings`` (commit
82a883d^), unchanged but for its registered name and this paragraph: it calls
``mc_input_grad(model, x, y, n_samples=..., objective=..., generator=...)``, the form of that
release. robustbnn promises that such a plug-in keeps running, with a warning, for one more
release (docs/api/public.md); ``tests/attacks/test_public_api.py`` runs it.

The original docstring follows.

An attack plug-in, registered as ``pgd_l2``: projected gradient descent in the L2 ball.

    robustbnn bench --suite smoke --plugin tests.plugins.old_l2_pgd_plugin --attacks old_pgd_l2 ...
    robustbnn check --plugin tests.plugins.old_l2_pgd_plugin --attack old_pgd_l2

An attack is a frozen dataclass deriving from ``robustbnn.attacks.base.Attack``: its fields
are its settings (``eps`` and ``n_samples`` come from each cell, the rest from the defaults and
``--set pgd_l2.field=value``, checked against ``ranges``), and it declares its norm and its own
eps grid. The harness refuses any batch outside that norm ball or outside [0, 1].

Each step moves x by ``step_size`` along the L2-normalised EOT gradient (``objective``: mean_s
CE, Athalye et al. 2018), then projects onto the eps-ball around the clean input and into
[0, 1]; the start is uniform in the ball. Norm: L2. Shapes: x (B, *), y (B,) -> x_adv (B, *).

References:
    Madry, Makelov, Schmidt, Tsipras & Vladu, "Towards Deep Learning Models Resistant to
    Adversarial Attacks", ICLR 2018, arXiv:1706.06083 (PGD; MNIST L2 radii around 1-2).
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import torch
from torch import Tensor

from robustbnn.attacks import ATTACKS, mc_input_grad
from robustbnn.attacks.base import Attack
from robustbnn.config import NON_NEGATIVE, POSITIVE, POSITIVE_INT, OneOf, Range


def _norms(v: Tensor) -> Tensor:
    """Per-example L2 norms, shaped to broadcast against v: (B, 1, ..., 1)."""
    return v.flatten(1).norm(dim=1).clamp_min(1e-12).view(-1, *[1] * (v.ndim - 1))


@dataclasses.dataclass(frozen=True)
class PGDL2(Attack):
    """L2 PGD with EOT gradients and a random start in the ball.

    Attributes:
        eps: L2 radius.
        n_samples: S_attack, posterior samples per gradient.
        steps: Gradient steps.
        step_size: L2 length of each step, as a fraction of eps (Madry et al.: 2.5 / steps).
        objective: ``"expected"`` (EOT, mean_s CE) or ``"predictive"`` (CE of p̄).
        random_start: Start uniformly in the ball (else at x).
    """

    eps: float = 1.0
    n_samples: int = 1
    steps: int = 10
    step_size: float = 0.25
    objective: str = "expected"
    random_start: bool = True

    norm: ClassVar[str] = "l2"
    eps_grid: ClassVar[tuple[float, ...]] = (0.5, 1.0, 2.0)  # MNIST pixels in [0, 1]
    reference: ClassVar[str] = "Madry et al. 2018, arXiv:1706.06083"
    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "eps": NON_NEGATIVE, "n_samples": POSITIVE_INT, "steps": NON_NEGATIVE,
        "step_size": POSITIVE, "objective": OneOf(("expected", "predictive"))}

    def _project(self, x_adv: Tensor, x0: Tensor) -> Tensor:
        delta = x_adv - x0
        delta = delta * (self.eps / _norms(delta)).clamp(max=1.0)
        return (x0 + delta).clamp(0.0, 1.0)  # the box only shortens delta: still in the ball

    def __call__(self, model: torch.nn.Module, x: Tensor, y: Tensor, *,
                 generator: torch.Generator | None = None) -> Tensor:
        """Return adversarial inputs within L2 distance eps of ``x``, in [0, 1].

        Args:
            model: A registry model (``sample_logits`` contract).
            x: Inputs in [0, 1], shape (B, *).
            y: True labels, shape (B,).
            generator: Source of the random start and of the posterior samples.
        """
        x0 = x.detach()
        x_adv = x0
        if self.random_start:  # uniform in the ball: a direction, and a radius eps·U^(1/D)
            d = x0[0].numel()
            z = torch.randn(x0.shape, generator=generator, device=x0.device, dtype=x0.dtype)
            r = torch.rand((len(x0),), generator=generator, device=x0.device, dtype=x0.dtype)
            radius = self.eps * r.pow(1.0 / d).view(-1, *[1] * (x0.ndim - 1))
            x_adv = self._project(x0 + radius * z / _norms(z), x0)
        for _ in range(self.steps):
            grad = mc_input_grad(model, x_adv, y, n_samples=self.n_samples,
                                 objective=self.objective, generator=generator)
            x_adv = self._project(x_adv + self.step_size * self.eps * grad / _norms(grad), x0)
        return x_adv


ATTACKS.register("old_pgd_l2", PGDL2)
