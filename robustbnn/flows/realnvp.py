"""RealNVP affine coupling and the fixed permutations placed between coupling layers."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from robustbnn.flows.linear import DELTA


class AffineCoupling(nn.Module):
    """RealNVP affine coupling: [z₁, z₂] → [z₁, s ⊙ z₂ + m].

    h = ReLU(z₁W₁ + b₁), s = exp(hW_s + b_s) + δ and m = hW_m + b_m, where z₁ is the first
    ⌊D/2⌋ coordinates. Log-det Σ log s; cost O(D·H).

    ``weight_norm=False`` is ``CoupledDenseLayer`` of the BHN code (used by its MNIST
    ``MLPWeightNorm_BHN``); ``weight_norm=True`` is ``CoupledWNDenseLayer`` (its CNN and
    anomaly-detection hypernets, ``--coupledWN 1``): every weight column is W_j = r_j ·
    u_j / ‖u_j‖, which the paper reports "stabilizes training dramatically" [SEED §3.3].

    Args:
        dim: D.
        hidden: Hidden units of the coupling MLP (200 in the paper).
        weight_norm: Weight-normalise the three linear maps.
        generator: Source of the initialisation.
        init_std: Standard deviation of the initial weights and gains (1e-4 [CODE]); biases
            start at 0.

    References:
        Dinh, Sohl-Dickstein & Bengio, "Density estimation using Real NVP", ICLR 2017,
        arXiv:1605.08803.
    """

    def __init__(self, dim: int, hidden: int = 200, *, weight_norm: bool = False,
                 generator: torch.Generator | None = None, init_std: float = 1e-4) -> None:
        super().__init__()
        self.split = dim // 2
        d1, d2 = self.split, dim - self.split
        self.w_in = nn.Parameter(init_std * torch.randn(d1, hidden, generator=generator))
        self.w_scale = nn.Parameter(init_std * torch.randn(hidden, d2, generator=generator))
        self.w_shift = nn.Parameter(init_std * torch.randn(hidden, d2, generator=generator))
        self.gains = None
        if weight_norm:
            self.gains = nn.ParameterList(
                nn.Parameter(init_std * torch.randn(n, generator=generator))
                for n in (hidden, d2, d2))
        self.b_in = nn.Parameter(torch.zeros(hidden))
        self.b_scale = nn.Parameter(torch.zeros(d2))
        self.b_shift = nn.Parameter(torch.zeros(d2))

    def _linear(self, x: Tensor, w: Tensor, b: Tensor, i: int) -> Tensor:
        if self.gains is None:
            return x @ w + b
        norm = torch.linalg.vector_norm(w, dim=0)  # per output column
        return (x @ w) * (self.gains[i] / torch.where(norm > 0, norm, torch.ones_like(norm))) + b

    def forward(self, z: Tensor) -> tuple[Tensor, Tensor]:
        """Map z of shape (..., D) to (z', log-det of shape (...))."""
        z1, z2 = z[..., : self.split], z[..., self.split :]
        h = F.relu(self._linear(z1, self.w_in, self.b_in, 0))
        s = self._linear(h, self.w_scale, self.b_scale, 1).exp() + DELTA
        m = self._linear(h, self.w_shift, self.b_shift, 2)
        return torch.cat([z1, s * z2 + m], dim=-1), s.log().sum(-1)


class Permutation(nn.Module):
    """z → z[..., π] for a fixed random permutation π ≠ identity (log-det 0).

    Args:
        dim: D.
        generator: Source of π (redrawn while it is the identity, as ``PermuteLayer`` [CODE]).
    """

    def __init__(self, dim: int, *, generator: torch.Generator | None = None) -> None:
        super().__init__()
        perm = torch.randperm(dim, generator=generator)
        while dim > 1 and torch.equal(perm, torch.arange(dim)):
            perm = torch.randperm(dim, generator=generator)
        self.register_buffer("perm", perm)

    def forward(self, z: Tensor) -> tuple[Tensor, Tensor]:
        """Map z of shape (..., D) to (z[..., π], zeros of shape (...))."""
        return z[..., self.perm], z.new_zeros(z.shape[:-1])


class Reverse(nn.Module):
    """z → z[..., ::-1] (log-det 0): the BHN anomaly-detection script's ``ReverseLayer``.

    ``dk_anomaly_detection.py`` puts one before every coupling layer, so consecutive couplings
    alternate between transforming the two halves [CODE BHN ``modules.ReverseLayer``]. It
    draws nothing, unlike :class:`Permutation`.

    Args:
        dim: D.
    """

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.register_buffer("perm", torch.arange(dim - 1, -1, -1), persistent=False)

    def forward(self, z: Tensor) -> tuple[Tensor, Tensor]:
        """Map z of shape (..., D) to (z reversed along its last axis, zeros of shape (...))."""
        return z.flip(-1), z.new_zeros(z.shape[:-1])
