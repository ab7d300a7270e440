"""Dropout masks drawn from an explicit generator, independent of train/eval mode."""

from __future__ import annotations

import torch
from torch import Tensor


def dropout(h: Tensor, p: float, generator: torch.Generator | None) -> Tensor:
    """Inverted dropout with drop rate ``p`` and a fresh mask for every element of ``h``.

    Unlike ``F.dropout`` this ignores ``self.training`` and takes a generator, so MC-dropout
    samples are the same in ``eval()`` and ``train()`` and reproducible under a seed.
    """
    if p <= 0.0:
        return h
    keep = torch.rand(h.shape, generator=generator, device=h.device, dtype=h.dtype) >= p
    return h * keep / (1.0 - p)
