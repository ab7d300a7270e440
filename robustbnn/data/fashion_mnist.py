"""Fashion-MNIST test images as an OOD set for MNIST models.

Reads ``t10k-images-idx3-ubyte.gz`` from ``<root>/fashion_mnist/`` or torchvision's
``<root>/FashionMNIST/raw/`` (checked against torchvision's md5), or downloads it with
torchvision when ``download=True``. Not in ``shared/data``.

References:
    Xiao, Rasul & Vollgraf, "Fashion-MNIST: a Novel Image Dataset for Benchmarking Machine
    Learning Algorithms", 2017, https://arxiv.org/abs/1708.07747
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from torch import Tensor

from robustbnn.data._ood import check_preprocessing, uint8_to_unit
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


def load_fashion_mnist(
    data_root: Path,
    n: int = 0,
    *,
    seed: int = 0,
    preprocessing: str = "unit",
    download: bool = False,
    checksums: Mapping[str, str] | None = None,
) -> Tensor:
    """Load the first ``n`` Fashion-MNIST test images in file order (all when ``n <= 0``).

    Args:
        data_root: Folder holding ``fashion_mnist/`` or ``FashionMNIST/raw/``.
        n: Number of images; all 10,000 when ``n <= 0``.
        seed: Unused (the order is fixed); accepted for the common OOD-set signature.
        preprocessing: ``"unit"`` or ``"bhn_reference"``; both give [0, 1] (the reference
            did not use this set).
        download: Fetch the dataset with torchvision if the file is missing.
        checksums: File name -> expected md5 or sha256; defaults to torchvision's md5.

    Returns:
        float32 tensor of shape (N, 1, 28, 28) in [0, 1].

    Raises:
        ConfigError: If ``preprocessing`` is unknown.
        DataError: If the file is missing (and ``download`` is False), the download fails,
            or the file fails its checksum or does not parse.
    """
    check_preprocessing(preprocessing)
    return uint8_to_unit(FASHION_MNIST.load_images(data_root, n, download=download,
                                                   checksums=checksums))
