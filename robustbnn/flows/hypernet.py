"""A Bayesian hypernetwork's distribution q(θ): noise ε ~ N(0, I) pushed through a flow."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from robustbnn.errors import ConfigError
from robustbnn.flows.chain import build_flow
from robustbnn.flows.linear import LinearFlow

_LOG_2PI = math.log(2 * math.pi)


class Hypernet(nn.Module):
    """θ = h(ε), ε ~ N(0, σ²I_D), h = flow ∘ LinearFlow; log q(θ) by change of variables.

    log q(θ) = log N(ε; 0, σ²I) − log|det ∂h/∂ε| (Krueger et al. eq. 6), σ = ``noise_std``.
    With ``steps=0`` q is the factorised Gaussian N(b, diag((σ(exp(w) + δ))²)) of the
    LinearFlow.

    Args:
        dim: D, the number of generated parameters.
        kind: ``"iaf"`` or ``"realnvp"`` (see :func:`~robustbnn.flows.build_flow`).
        steps: Flow steps after the LinearFlow.
        hidden: Hidden units of each flow step.
        log_scale_mean: Mean of the LinearFlow's initial log-scale w (−7 [CODE]).
        coupling_weight_norm: Weight-normalise RealNVP couplings.
        coupling_order: Where RealNVP reorders coordinates (``order`` of
            :func:`~robustbnn.flows.build_flow`).
        noise_std: σ of the noise ε. 1 in the BHN paper and ``BHNs.py``; 0.01 in
            ``dk_anomaly_detection.py`` (``srng.normal(std=0.01)``), which scores ε as if it
            were N(0, I): that log-density differs from log N(ε; 0, σ²I) by a term free of
            parameters, so both give the same gradients; the exact one is used here.
        linear_last: Apply the flow to the noise first and the LinearFlow last,
            θ = b + (exp(w) + δ) ⊙ flow(ε), so the flow shapes only the noise around the
            mean b. The BHN code puts the LinearFlow first (the default).
        generator: Source of every random draw at construction.
    """

    def __init__(self, dim: int, kind: str, steps: int, hidden: int = 200, *,
                 log_scale_mean: float = -7.0, coupling_weight_norm: bool = False,
                 linear_last: bool = False, coupling_order: str = "permute",
                 noise_std: float = 1.0,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        if not noise_std > 0:
            raise ConfigError(f"noise_std must be > 0, got {noise_std}")
        self.dim, self.linear_last, self.noise_std = dim, linear_last, noise_std
        self.linear = LinearFlow(dim, generator=generator, log_scale_mean=log_scale_mean)
        self.flow = build_flow(kind, dim, steps, hidden,
                               coupling_weight_norm=coupling_weight_norm,
                               order=coupling_order, generator=generator)

    def forward(self, eps: Tensor) -> tuple[Tensor, Tensor]:
        """Parameters θ = h(ε), shape (..., D), and log q(θ), shape (...)."""
        if self.linear_last:
            z, more = self.flow(eps)
            z, logdet = self.linear(z)
        else:
            z, logdet = self.linear(eps)
            z, more = self.flow(z)
        if self.noise_std == 1.0:
            log_noise = -0.5 * eps.square().sum(-1) - 0.5 * self.dim * _LOG_2PI
        else:  # log N(ε; 0, σ²I)
            log_noise = (-0.5 * (eps / self.noise_std).square().sum(-1)
                         - self.dim * (math.log(self.noise_std) + 0.5 * _LOG_2PI))
        return z, log_noise - logdet - more

    def rsample(self, n: int, *, generator: torch.Generator | None,
                device: torch.device | str | None, dtype: torch.dtype | None
                ) -> tuple[Tensor, Tensor]:
        """Draw n reparameterised samples.

        Args:
            n: S.
            generator: Source of ε ~ N(0, σ²I).
            device: Device of ε (the input's).
            dtype: Dtype of ε (the input's).

        Returns:
            θ of shape (S, D) and log q(θ) of shape (S,).
        """
        eps = torch.randn(n, self.dim, generator=generator, device=device, dtype=dtype)
        if self.noise_std != 1.0:
            eps = eps * self.noise_std
        return self(eps)
