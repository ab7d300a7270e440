"""Kuzushiji-MNIST (KMNIST) test images as an OOD set for MNIST models.

Reads ``t10k-images-idx3-ubyte.gz`` from ``<root>/kmnist/`` or torchvision's
``<root>/KMNIST/raw/`` (checked against torchvision's md5), or downloads it with
torchvision when ``download=True``. Not in ``shared/data``.

References:
    Clanuwat et al., "Deep Learning for Classical Japanese Literature", 2018,
    https://arxiv.org/abs/1812.01718
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torch import Tensor

from robustbnn.data._tv_idx import TorchvisionIdxSet

KMNIST = TorchvisionIdxSet(
    title="KMNIST",
    folder="kmnist",
    tv_class="KMNIST",
    md5="5c965bf0a639b31b8f53240b1b52f4d7",  # torchvision KMNIST.resources
)


def kmnist_available(data_root: Path) -> bool:
    """True if the KMNIST test images are under ``data_root`` (no hashing)."""
    return KMNIST.available(data_root)


def load_kmnist(data_root: Path, n: int = 0, **options: Any) -> Tensor:
    """The first ``n`` KMNIST test images, float32 (N, 1, 28, 28) in [0, 1] (all when
    ``n <= 0``).

    The options (``seed``, ``preprocessing``, ``download``, ``checksums``) and errors are those
    of :meth:`robustbnn.data._tv_idx.TorchvisionIdxSet.load`.
    """
    return KMNIST.load(data_root, n, **options)
