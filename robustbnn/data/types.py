"""The two containers every dataset loader returns: :class:`Split` and :class:`DataBundle`."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


class SplitError(ValueError):
    """A split of the wrong dtype, rank or length (:func:`robustbnn.data.load_dataset` names
    the dataset)."""


@dataclass(frozen=True)
class Split:
    """Images and labels of one split (train, val or test).

    Args:
        x: Images in [0, 1], float32, shape (N, 1, H, W); (N, 1, 28, 28) for the MNIST family.
        y: Class labels, int64, shape (N,).

    Raises:
        SplitError: A ``ValueError``: if a dtype, rank or length is wrong.
    """

    x: Tensor
    y: Tensor

    def __post_init__(self) -> None:
        """Check dtypes, ranks and lengths (cheap; no pass over the pixels)."""
        if self.x.dtype != torch.float32 or self.x.ndim != 4 or self.x.shape[1] != 1:
            raise SplitError(
                f"Split.x must be float32 of shape (N, 1, H, W), got {self.x.dtype} "
                f"{tuple(self.x.shape)}"
            )
        if self.y.dtype != torch.int64 or self.y.ndim != 1:
            raise SplitError(f"Split.y must be int64 of shape (N,), got {self.y.dtype} "
                             f"{tuple(self.y.shape)}")
        if len(self.x) != len(self.y):
            raise SplitError(f"Split has {len(self.x)} images but {len(self.y)} labels")

    def __len__(self) -> int:
        """Number of examples N."""
        return len(self.y)


@dataclass(frozen=True)
class DataBundle:
    """A dataset ready for the benchmark: three disjoint splits plus provenance.

    Args:
        name: Registry name of the dataset (``"mnist"``, ``"mnist5k"``).
        train: Training split.
        val: Validation split, carved from the official training data (never from test).
        test: Test split.
        num_classes: Number of classes C.
        fingerprint: sha256 hex digest of the uint8 pixels and labels of train, val and test
            (see :func:`robustbnn.data.bundle.fingerprint`); keys the model cache.
        source: Where the data came from, for humans (file paths or package file).
    """

    name: str
    train: Split
    val: Split
    test: Split
    num_classes: int
    fingerprint: str
    source: str
