"""Kuzushiji-MNIST (KMNIST) test images as an OOD set for MNIST models.

Reads ``t10k-images-idx3-ubyte.gz`` from ``<root>/kmnist/`` or torchvision's
``<root>/KMNIST/raw/`` (checked against torchvision's md5), or downloads it with
torchvision when ``download=True``. Not in ``shared/data``.

References:
    Clanuwat et al., "Deep Learning for Classical Japanese Literature", 2018,
    https://arxiv.org/abs/1812.01718
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from torch import Tensor

from robustbnn.data._ood import check_preprocessing, uint8_to_unit
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


def load_kmnist(
    data_root: Path,
    n: int = 0,
    *,
    seed: int = 0,
    preprocessing: str = "unit",
    download: bool = False,
    checksums: Mapping[str, str] | None = None,
) -> Tensor:
    """Load the first ``n`` KMNIST test images in file order (all when ``n <= 0``).

    Args:
        data_root: Folder holding ``kmnist/`` or ``KMNIST/raw/``.
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
    return uint8_to_unit(KMNIST.load_images(data_root, n, download=download,
                                                   checksums=checksums))
