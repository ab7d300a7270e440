"""Fashion-MNIST test images as an OOD set for MNIST models.

Reads ``t10k-images-idx3-ubyte.gz`` from ``<root>/fashion_mnist/`` or torchvision's
``<root>/FashionMNIST/raw/`` (checked against torchvision's md5), or downloads it with
torchvision when ``download=True``. Not in ``shared/data``.

References:
    Xiao, Rasul & Vollgraf, "Fashion-MNIST: a Novel Image Dataset for Benchmarking Machine
    Learning Algorithms", 2017, https://arxiv.org/abs/1708.07747
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torch import Tensor

from robustbnn.data._tv_idx import TorchvisionIdxSet

FASHION_MNIST = TorchvisionIdxSet(
    title="Fashion-MNIST",
    folder="fashion_mnist",
    tv_class="FashionMNIST",
    md5="bef4ecab320f06d8554ea6380940ec79",  # torchvision FashionMNIST.resources
)


def fashion_mnist_available(data_root: Path) -> bool:
    """True if the Fashion-MNIST test images are under ``data_root`` (no hashing)."""
    return FASHION_MNIST.available(data_root)


def load_fashion_mnist(data_root: Path, n: int = 0, **options: Any) -> Tensor:
    """The first ``n`` Fashion-MNIST test images, float32 (N, 1, 28, 28) in [0, 1] (all when
    ``n <= 0``).

    The options (``seed``, ``preprocessing``, ``download``, ``checksums``) and errors are those
    of :meth:`robustbnn.data._tv_idx.TorchvisionIdxSet.load`.
    """
    return FASHION_MNIST.load(data_root, n, **options)
