"""Fast gradient sign method on the Monte Carlo posterior predictive.

References:
    Goodfellow, Shlens & Szegedy, "Explaining and Harnessing Adversarial Examples",
    ICLR 2015, arXiv:1412.6572. As used by Krueger et al. 2017 (BHN §4.5: true label, 1 or 32
    posterior samples, no clipping in their code) and Li & Gal 2017 (§5.3: predicted label,
    10 samples, clipped to [0, 1]).

Norm: L-infinity. Shapes: x (B, *), y (B,) -> x_adv (B, *).

Example:
    >>> import torch
    >>> from robustbnn.models import MODELS
    >>> spec = MODELS.get("mlp")
    >>> model = spec.build(spec.config(), (1, 28, 28), 10, torch.Generator().manual_seed(0))
    >>> x, y = torch.rand(4, 1, 28, 28), torch.tensor([0, 1, 2, 3])
    >>> x_adv = FGSM(eps=0.1)(model, x, y)
    >>> bool((x_adv - x).abs().max() <= 0.1 + 1e-6), bool(x_adv.min() >= 0), x_adv.shape
    (True, True, torch.Size([4, 1, 28, 28]))
"""

from __future__ import annotations

import dataclasses

import torch
from torch import Tensor

from robustbnn.attacks._grad import mc_input_grad
from robustbnn.predict import sample_probs

LABELS = ("true", "predicted")


@dataclasses.dataclass(frozen=True)
class FGSM:
    """Untargeted FGSM: x_adv = x + eps * sign(grad_x CE(p_bar(x), label)).

    Attributes:
        eps: Step size (L-infinity radius).
        n_samples: S_attack, posterior samples in the gradient estimate.
        objective: ``"predictive"`` (papers) or ``"expected"`` (EOT).
        label: ``"true"`` (BHN) or ``"predicted"`` (Li & Gal; avoids label leaking).
        clip: Clip to [0, 1] (Li & Gal); BHN's code did not clip.
    """

    eps: float
    n_samples: int = 1
    objective: str = "predictive"
    label: str = "true"
    clip: bool = True

    def direction(self, model: torch.nn.Module, x: Tensor, y: Tensor, *,
                  generator: torch.Generator | None = None, name: str = "model") -> Tensor:
        """sign of the MC input gradient, shape of ``x``; it does not depend on ``eps``."""
        if self.label not in LABELS:
            raise ValueError(f"unknown label policy {self.label!r}; known: {list(LABELS)}")
        if self.label == "predicted":
            probs = sample_probs(model, x, self.n_samples, generator=generator, name=name)
            y = probs.mean(0).argmax(-1)
        grad = mc_input_grad(model, x, y, n_samples=self.n_samples, objective=self.objective,
                             generator=generator, name=name)
        return grad.sign()

    def __call__(self, model: torch.nn.Module, x: Tensor, y: Tensor, *,
                 generator: torch.Generator | None = None, name: str = "model") -> Tensor:
        """Return adversarial inputs, shape of ``x``."""
        step = self.direction(model, x, y, generator=generator, name=name)
        x_adv = x.detach() + self.eps * step
        return x_adv.clamp(0.0, 1.0) if self.clip else x_adv
