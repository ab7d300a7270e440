"""Bitwise comparison of samples and state dicts, for the model contract's clauses.

The clauses compare raw bytes, not values within a tolerance: equal generators must give
bitwise equal samples, and sampling must leave every state entry bitwise as it was.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["bits", "equal", "first_difference", "max_diff"]


def equal(a: Tensor, b: Tensor) -> bool:
    """Same shape and bitwise equal values (NaNs in the same places count as equal)."""
    return a.shape == b.shape and torch.equal(bits(a), bits(b))


def bits(t: Tensor) -> Tensor:
    """The raw bytes of ``t``, so NaN == NaN and -0.0 != 0.0."""
    return t.detach().contiguous().reshape(-1).view(torch.uint8)


def max_diff(a: Tensor, b: Tensor) -> str:
    """The largest |a - b| for a message, or that the shapes differ."""
    if a.shape != b.shape:
        return "n/a: shapes differ"
    return f"{(a.double() - b.double()).abs().max().item():.3g}"


def first_difference(before: dict[str, Tensor], after: dict[str, Tensor]) -> str | None:
    """The first state entry that was added, removed or changed bitwise, else None."""
    added_or_removed = sorted(before.keys() ^ after.keys())
    if added_or_removed:
        return added_or_removed[0]
    for key, value in before.items():
        other = after[key]
        if value.dtype != other.dtype or not equal(value, other):
            return key
    return None


