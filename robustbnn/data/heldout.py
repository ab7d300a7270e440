"""Held-out-class OOD (BHN Table 3): train without class k, treat class k as OOD.

``heldout:<k>`` names the task. :func:`heldout_split` removes class k from the training,
validation and test splits, maps the remaining labels to 0..C−2 (the BHN code's net has 9
outputs, ``--ooc 1 --exclude k``), and returns the *training* images of class k as the OOD
set, as the code does (``train_x2``). The reduced data has its own fingerprint, so the model
cache keeps one entry per (model, k) like any other config change.

Example:
    >>> parse_heldout("heldout:4"), parse_heldout("uniform")
    (4, None)
"""

from __future__ import annotations

import dataclasses
import hashlib
import re

from torch import Tensor

from robustbnn.data.types import DataBundle, Split
from robustbnn.errors import ConfigError

__all__ = ["heldout_name", "heldout_split", "parse_heldout"]

_PATTERN = re.compile(r"heldout:(.*)")


def heldout_name(k: int) -> str:
    """The OOD-set name of held-out class k."""
    return f"heldout:{k}"


def parse_heldout(name: str, num_classes: int = 10) -> int | None:
    """The class of a ``heldout:<k>`` name, or None for any other name.

    Raises:
        ConfigError: If ``name`` starts with ``heldout:`` but k is not a class index.
    """
    match = _PATTERN.fullmatch(name)
    if match is None:
        return None
    text = match.group(1)
    if not text.isdigit() or int(text) >= num_classes:
        raise ConfigError(f"bad held-out class in {name!r}: use heldout:<k> with k in "
                          f"0..{num_classes - 1}, e.g. heldout:4")
    return int(text)


def _drop(split: Split, k: int) -> Split:
    keep = split.y != k
    y = split.y[keep]
    return Split(split.x[keep], y - (y > k).to(y.dtype))


def heldout_split(data: DataBundle, k: int) -> tuple[DataBundle, Tensor]:
    """``data`` without class k (labels above k shifted down) and the OOD images of class k.

    Args:
        data: A classification bundle.
        k: The class to hold out, 0 ≤ k < ``data.num_classes``.

    Returns:
        The reduced bundle (C − 1 classes, its own fingerprint) and the training images of
        class k, shape (N_k, *).

    Raises:
        ConfigError: If k is not a class of ``data``.
    """
    if not 0 <= k < data.num_classes:
        raise ConfigError(f"held-out class {k} is not a class of {data.name} "
                          f"(0..{data.num_classes - 1})")
    fingerprint = hashlib.sha256(f"{data.fingerprint}/heldout:{k}".encode()).hexdigest()
    reduced = dataclasses.replace(
        data, train=_drop(data.train, k), val=_drop(data.val, k), test=_drop(data.test, k),
        num_classes=data.num_classes - 1, fingerprint=fingerprint,
        source=f"{data.source}, class {k} held out")
    return reduced, data.train.x[data.train.y == k]
