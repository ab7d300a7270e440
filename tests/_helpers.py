"""Small helpers shared by the tests."""

from __future__ import annotations

import torch


def seeded(seed: int = 0) -> torch.Generator:
    """A fresh CPU generator seeded with ``seed``: the same draws on every call."""
    return torch.Generator().manual_seed(seed)
