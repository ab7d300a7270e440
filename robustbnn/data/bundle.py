"""Turn uint8 arrays into a :class:`DataBundle`, computing its fingerprint on the way."""

from __future__ import annotations

import hashlib

import numpy as np
import torch

from robustbnn.data.types import DataBundle, Split

SPLIT_NAMES = ("train", "val", "test")


def to_split(images: np.ndarray, labels: np.ndarray) -> Split:
    """Convert uint8 images (N, H, W) in 0..255 and integer labels (N,) to a :class:`Split`."""
    x = torch.from_numpy(np.ascontiguousarray(images)).unsqueeze(1).float().div_(255.0)
    y = torch.from_numpy(np.asarray(labels, dtype=np.int64).copy())
    return Split(x, y)


def fingerprint(splits: dict[str, tuple[np.ndarray, np.ndarray]]) -> str:
    """sha256 hex digest identifying the data of a bundle.

    For each split in the order train, val, test the hash takes the split name, the image
    shape, the uint8 pixels in C order and the labels as little-endian int64. Same data and
    split → same digest on every platform; moving one image between splits changes it.

    Args:
        splits: Maps ``"train"``, ``"val"``, ``"test"`` to (uint8 images (N, H, W), labels (N,)).

    Returns:
        A 64-character hex string.
    """
    h = hashlib.sha256()
    for name in SPLIT_NAMES:
        images, labels = splits[name]
        images = np.ascontiguousarray(images, dtype=np.uint8)
        h.update(f"{name}:{'x'.join(map(str, images.shape))};".encode())
        h.update(images.tobytes())
        h.update(np.ascontiguousarray(labels, dtype="<i8").tobytes())
    return h.hexdigest()


def make_bundle(
    name: str,
    splits: dict[str, tuple[np.ndarray, np.ndarray]],
    *,
    num_classes: int,
    source: str,
) -> DataBundle:
    """Build a :class:`DataBundle` from uint8 arrays.

    Args:
        name: Registry name of the dataset.
        splits: Maps ``"train"``, ``"val"``, ``"test"`` to (uint8 images (N, H, W), labels (N,)).
        num_classes: Number of classes C.
        source: Human-readable origin of the data.

    Returns:
        The bundle, with images scaled to [0, 1] and its fingerprint set.
    """
    return DataBundle(
        name=name,
        train=to_split(*splits["train"]),
        val=to_split(*splits["val"]),
        test=to_split(*splits["test"]),
        num_classes=num_classes,
        fingerprint=fingerprint(splits),
        source=source,
    )
