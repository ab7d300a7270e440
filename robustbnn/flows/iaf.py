"""One inverse autoregressive flow step, in its one-pass (sampling) direction."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from robustbnn.flows.linear import DELTA
from robustbnn.flows.made import MADE


class IAFStep(nn.Module):
    """z ← μ(z) + σ(z) ⊙ z with σ = exp(·) + δ from a MADE; log-det Σ_d log σ_d.

    μ_d and σ_d depend only on the coordinates before d in the step's random ordering, so the
    Jacobian is triangular with diagonal σ and the step costs one MADE pass, O(D·H).
    Each step draws its own ordering [CODE BHN: ``MADE(..., random_seed=1234+l)``,
    ``shuffle('Full')``].

    Args:
        dim: D.
        hidden: Hidden units of the MADE (200 in the paper).
        generator: Source of the ordering and of the initialisation.

    References:
        Kingma et al., "Improved Variational Inference with Inverse Autoregressive Flow",
        NeurIPS 2016, arXiv:1606.04934.
    """

    def __init__(self, dim: int, hidden: int = 200, *,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.made = MADE(dim, hidden, generator=generator)

    def forward(self, z: Tensor) -> tuple[Tensor, Tensor]:
        """Map z of shape (..., D) to (z', log-det of shape (...))."""
        mu, pre_scale = self.made(z)
        sigma = pre_scale.exp() + DELTA
        return mu + sigma * z, sigma.log().sum(-1)
