"""OOD-set and dataset plug-ins with broken images, each registered under its own name.

Each OOD set is uniform noise U[0, 1) (:func:`robustbnn.data.noise.uniform_noise`) broken in
one way: ``ood_255`` in [0, 255], ``ood_centred`` in [-0.5, 0.5] for every preprocessing
(so also under ``unit``), ``ood_uint8`` of dtype uint8, ``ood_empty`` without images,
``ood_flat`` of shape (N, 784), ``ood_nan_pixel`` with one NaN pixel, ``ood_rgb`` with three
channels; ``ood_float64`` is in [0, 1] as float64. Pixel 0 of image 0 is 0 and pixel 1 is 1,
so the ranges are exact. The datasets ``data_255`` and ``data_flat`` are mnist5k with its
test images in [0, 255] and flattened to (N, 784).
"""

import dataclasses
from pathlib import Path

import torch

from robustbnn.data import DATASETS, DatasetSpec, load_dataset
from robustbnn.data.noise import uniform_noise
from robustbnn.data.ood_sets import OOD_DATASETS, OODSpec
from robustbnn.data.types import Split


def _noise(n: int, seed: int) -> torch.Tensor:
    x = uniform_noise(n if n > 0 else 100, seed=seed)  # (N, 1, 28, 28) in [0, 1)
    x[0, 0, 0, :2] = torch.tensor([0.0, 1.0])
    return x


def _always(data_root: Path | None = None) -> bool:
    return True


def _loader(broken):
    def load(data_root=None, n=0, *, seed=0, preprocessing="unit", download=False):
        return broken(_noise(n, seed), preprocessing)

    return load


def _one_nan(x: torch.Tensor, preprocessing: str) -> torch.Tensor:
    x[3, 0, 14, 14] = float("nan")
    return x


BROKEN = {
    "ood_255": lambda x, p: x * 255,
    "ood_centred": lambda x, p: x - 0.5,
    "ood_uint8": lambda x, p: (x * 255).to(torch.uint8),
    "ood_empty": lambda x, p: x[:0],
    "ood_flat": lambda x, p: x.flatten(1),
    "ood_nan_pixel": _one_nan,
    "ood_float64": lambda x, p: x.double(),
    "ood_rgb": lambda x, p: x.expand(-1, 3, -1, -1),
}

for _name, _broken in BROKEN.items():
    OOD_DATASETS.register(_name, OODSpec(
        _name, f"uniform noise, broken ({_name})", _loader(_broken), _always, embedded=True))


def load_data_255(data_root=None, *, download=False):
    """mnist5k with its test images in [0, 255]."""
    data = load_dataset("mnist5k")
    return dataclasses.replace(data, name="data_255",
                               test=Split(data.test.x * 255, data.test.y))


def load_data_flat(data_root=None, *, download=False):
    """mnist5k with its test images flattened to (N, 784)."""
    data = load_dataset("mnist5k")
    return dataclasses.replace(data, name="data_flat",
                               test=Split(data.test.x.flatten(1), data.test.y))


DATASETS.register("data_255", DatasetSpec("data_255", "mnist5k, test images in [0, 255]",
                                          load_data_255, _always, embedded=True))
DATASETS.register("data_flat", DatasetSpec("data_flat", "mnist5k, test images flattened",
                                           load_data_flat, _always, embedded=True))
