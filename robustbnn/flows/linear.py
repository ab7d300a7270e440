"""The elementwise affine flow that opens every hypernet (Krueger et al.'s ``LinearFlowLayer``)."""

from __future__ import annotations

import torch
from torch import Tensor, nn

DELTA = 0.001  # floor added to every flow scale, exp(·) + 0.001 [CODE BHN modules.py]


class LinearFlow(nn.Module):
    """z = ε ⊙ (exp(w) + δ) + b, with log-det Σ_d log(exp(w_d) + δ).

    With no further layers this is a factorised Gaussian N(b, diag((exp(w) + δ)²)).

    Args:
        dim: D.
        generator: Source of the initialisation.
        log_scale_mean: Mean of the initial w; −7 gives a scale of about 0.0019 [CODE].
        init_std: Standard deviation of the initial w and b (0.01 [CODE]).
    """

    def __init__(self, dim: int, *, generator: torch.Generator | None = None,
                 log_scale_mean: float = -7.0, init_std: float = 0.01) -> None:
        super().__init__()
        self.log_scale = nn.Parameter(
            log_scale_mean + init_std * torch.randn(dim, generator=generator))
        self.shift = nn.Parameter(init_std * torch.randn(dim, generator=generator))

    def scale(self) -> Tensor:
        """The elementwise scale exp(w) + δ, shape (D,)."""
        return self.log_scale.exp() + DELTA

    def forward(self, z: Tensor) -> tuple[Tensor, Tensor]:
        """Map z of shape (..., D) to (z', log-det of shape (...))."""
        scale = self.scale()
        logdet = scale.log().sum().expand(z.shape[:-1])
        return z * scale + self.shift, logdet
