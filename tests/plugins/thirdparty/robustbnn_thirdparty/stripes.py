"""``tp_stripes``: generated stripe patterns, registered in ``OOD_DATASETS``.

Image i is a sinusoidal grating whose angle, period and phase come from
``numpy.random.default_rng([seed, i])``, so the first n images of a larger request are the same
images and no file is read. Values in [0, 1], shape (N, 1, 28, 28), float32.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from robustbnn.data.ood_sets import OOD_DATASETS, OODSpec


def load_stripes(data_root: Path | None = None, n: int = 0, *, seed: int = 0,
                 preprocessing: str = "unit", download: bool = False) -> Tensor:
    """``n`` stripe images (1,000 when ``n <= 0``), the same for both preprocessings."""
    count = n if n > 0 else 1000
    yy, xx = np.mgrid[0:28, 0:28].astype(np.float64)
    images = np.empty((count, 28, 28), dtype=np.float32)
    for i in range(count):
        rng = np.random.default_rng([seed, i])
        angle, period, phase = rng.uniform(0, np.pi), rng.uniform(3, 9), rng.uniform(0, 2 * np.pi)
        wave = np.cos(2 * np.pi * (xx * np.cos(angle) + yy * np.sin(angle)) / period + phase)
        images[i] = 0.5 + 0.5 * wave
    return torch.from_numpy(images).unsqueeze(1)


def _always(data_root: Path | None = None) -> bool:
    """Generated: always available."""
    return True


OOD_DATASETS.register("tp_stripes", OODSpec(
    "tp_stripes", "generated sinusoidal stripes (third-party plug-in)", load_stripes, _always,
    embedded=True))
