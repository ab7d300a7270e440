"""Noise OOD sets generated per index, so image i is the same whatever the access order.

Each image i is drawn from ``numpy.random.default_rng([seed, i])`` (docs/pitfalls.md §1.11: one
stateful generator makes image i depend on access order and worker layout).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor


def uniform_noise(n: int, *, seed: int = 0, shape: tuple[int, ...] = (1, 28, 28)) -> Tensor:
    """``n`` images with pixels i.i.d. U[0, 1) (Hendrycks & Gimpel), shape (n, *shape)."""
    imgs = [np.random.default_rng([seed, i]).random(shape, dtype=np.float32) for i in range(n)]
    return torch.from_numpy(np.stack(imgs)) if n else torch.zeros(0, *shape)


def gaussian_noise(n: int, *, seed: int = 0, shape: tuple[int, ...] = (1, 28, 28),
                   clip: bool = True) -> Tensor:
    """``n`` images with pixels i.i.d. N(0, 1); clipped to [0, 1] unless ``clip=False``.

    The BHN reference fed the unclipped values (docs/protocols.md §1.5); clipping keeps the inputs
    in the model's pixel range.
    """
    imgs = [np.random.default_rng([seed, i]).standard_normal(shape, dtype=np.float32)
            for i in range(n)]
    out = torch.from_numpy(np.stack(imgs)) if n else torch.zeros(0, *shape)
    return out.clamp(0.0, 1.0) if clip else out
