"""The L-infinity ball around x0, intersected with the image box [0, 1], that every iterative
attack steps in: its bounds, a uniform random start in it, and the projection onto it."""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["box", "project", "random_start"]


def box(x0: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    """``(lo, hi)``: the per-pixel bounds of the eps-ball around ``x0`` within [0, 1]."""
    return (x0 - eps).clamp(0.0, 1.0), (x0 + eps).clamp(0.0, 1.0)


def project(x: Tensor, lo: Tensor, hi: Tensor) -> Tensor:
    """``x`` clipped into ``[lo, hi]`` per pixel."""
    return torch.minimum(torch.maximum(x, lo), hi)


def random_start(x0: Tensor, eps: float, lo: Tensor, hi: Tensor,
                 generator: torch.Generator | None) -> Tensor:
    """A point drawn uniformly from the eps-cube around ``x0`` (from ``generator``), projected
    into ``[lo, hi]``."""
    noise = torch.rand(x0.shape, generator=generator, device=x0.device, dtype=x0.dtype)
    return project(x0 + eps * (2 * noise - 1), lo, hi)
