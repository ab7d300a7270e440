"""Projected gradient descent with expectation over transformation (EOT) and restarts.

References:
    Madry, Makelov, Schmidt, Tsipras & Vladu, "Towards Deep Learning Models Resistant to
    Adversarial Attacks", ICLR 2018, arXiv:1706.06083 (L-infinity PGD, random start; their
    MNIST setting eps = 0.3, step 0.01, 40 steps). Athalye, Carlini & Wagner, "Obfuscated
    Gradients Give a False Sense of Security", ICML 2018, arXiv:1802.00420 (EOT: average the
    gradient over the defence's randomness; PITFALLS.md §1.1).

Each step draws ``n_samples`` fresh posterior samples from the attack's generator and moves
x <- clip(proj_eps(x + alpha * sign(grad)), 0, 1), the gradient being of
``objective`` = ``"expected"`` (EOT, default: mean_s CE) or ``"predictive"`` (CE of p̄).
Each restart begins uniformly in the eps-ball (``random_start``). Restarts are compared per
example by **the attack objective on a fresh draw of ``n_samples`` samples from the attack's
generator** (never the evaluation's), and the highest is kept; ties keep the earlier restart.

Norm: L-infinity. Shapes: x (B, *), y (B,), target (B,) or int -> x_adv (B, *).

Example:
    >>> import torch
    >>> from robustbnn.models import MODELS
    >>> spec = MODELS.get("mlp")
    >>> model = spec.build(spec.config(), (1, 28, 28), 10, torch.Generator().manual_seed(0))
    >>> x, y = torch.rand(4, 1, 28, 28), torch.tensor([0, 1, 2, 3])
    >>> attack = PGD(eps=0.1, step_size=0.02, steps=5, restarts=2, n_samples=1)
    >>> x_adv = attack(model, x, y, generator=torch.Generator().manual_seed(0))
    >>> bool((x_adv - x).abs().max() <= 0.1 + 1e-6), bool(x_adv.min() >= 0), x_adv.shape
    (True, True, torch.Size([4, 1, 28, 28]))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import torch
from torch import Tensor

from robustbnn.attacks._grad import (
    as_target,
    attack_labels,
    check_options,
    mc_input_grad,
    mc_objective_per_example,
)

__all__ = ["PGD"]


@dataclasses.dataclass(frozen=True)
class PGD:
    """L-infinity PGD with EOT gradients, random starts and per-example best-of restarts.

    Attributes:
        eps: L-infinity radius (Madry et al. MNIST: 0.3).
        step_size: alpha, the size of each signed step (Madry et al.: 0.01).
        steps: Steps per restart (Madry et al. training: 40).
        restarts: Independent runs; each example keeps its strongest.
        random_start: Start uniformly in the eps-ball (else at ``x``).
        n_samples: S_attack, fresh posterior samples per step.
        objective: ``"expected"`` (EOT, default) or ``"predictive"``.
        label: ``"true"`` or ``"predicted"`` (the MC prediction on the clean input, fixed for
            all steps); unused when a ``target`` is passed.
    """

    eps: float = 0.3
    step_size: float = 0.01
    steps: int = 40
    restarts: int = 1
    random_start: bool = True
    n_samples: int = 10
    objective: str = "expected"
    label: str = "true"

    def __post_init__(self) -> None:
        if self.eps < 0 or self.steps < 0 or self.restarts < 1 or self.n_samples < 1:
            raise ValueError(f"need eps >= 0, steps >= 0, restarts >= 1 and n_samples >= 1, "
                             f"got {self.eps}, {self.steps}, {self.restarts}, {self.n_samples}")

    def runs(self, model: torch.nn.Module, x: Tensor, y: Tensor, *,
             target: Tensor | int | None = None, generator: torch.Generator | None = None,
             name: str = "model") -> Iterator[tuple[Tensor, Tensor]]:
        """Yield ``(x_adv, score)`` for every restart; ``score`` (B,) is what selection uses.

        ``score`` is the attack objective (CE of the label, or log p̄(target) when targeted)
        on a fresh draw of ``n_samples`` samples from ``generator``. Arguments as in
        :meth:`__call__`.
        """
        check_options(self.objective, self.label)
        x0 = x.detach()
        if target is not None:
            target = as_target(target, x0)
        else:
            y = attack_labels(model, x0, y, label=self.label, n_samples=self.n_samples,
                              generator=generator, name=name)
        lo, hi = (x0 - self.eps).clamp(0.0, 1.0), (x0 + self.eps).clamp(0.0, 1.0)
        for _ in range(self.restarts):
            x_adv = x0
            if self.random_start:
                noise = torch.rand(x0.shape, generator=generator, device=x0.device,
                                   dtype=x0.dtype)
                x_adv = torch.minimum(torch.maximum(x0 + self.eps * (2 * noise - 1), lo), hi)
            for _ in range(self.steps):
                grad = mc_input_grad(model, x_adv, y, n_samples=self.n_samples,
                                     objective=self.objective, target=target,
                                     generator=generator, name=name)
                x_adv = torch.minimum(torch.maximum(x_adv + self.step_size * grad.sign(), lo),
                                      hi)
            score = mc_objective_per_example(model, x_adv, y, n_samples=self.n_samples,
                                             objective=self.objective, target=target,
                                             generator=generator, name=name)
            yield x_adv, score

    def __call__(self, model: torch.nn.Module, x: Tensor, y: Tensor, *,
                 target: Tensor | int | None = None, generator: torch.Generator | None = None,
                 name: str = "model") -> Tensor:
        """Return the strongest restart per example, shape of ``x``.

        Args:
            model: A registry model (``sample_logits`` contract).
            x: Inputs in [0, 1], shape (B, *).
            y: True labels, shape (B,).
            target: Target class, shape (B,) or one int; ``None`` = untargeted.
            generator: Source of all the attack's randomness (starts and posterior samples).
            name: Model name for contract errors.
        """
        best, best_score = x.detach(), None
        for x_adv, score in self.runs(model, x, y, target=target, generator=generator,
                                      name=name):
            if best_score is None:
                best, best_score = x_adv, score
                continue
            better = (score > best_score).view(-1, *[1] * (x.ndim - 1))  # (B, 1, ...)
            best = torch.where(better, x_adv, best)
            best_score = torch.maximum(score, best_score)
        return best
