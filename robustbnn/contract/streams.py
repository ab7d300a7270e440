"""Named random streams: one ``torch.Generator`` per (seed or cell id, stream names).

Every model and stage has its own stream, so results do not depend on which models are cached
or in which order cells run, and evaluation samples never reuse attack samples.
"""

from __future__ import annotations

import hashlib

import torch

__all__ = ["make_generator"]

def make_generator(device: torch.device | str, seed: int | str, *keys: str) -> torch.Generator:
    """A generator for one stream, derived from a seed or a cell id and stream names.

    Every model and stage has its own stream, so results do not depend on which models are
    cached or in which order cells run, and evaluation samples never reuse attack samples.
    """
    digest = hashlib.sha256("/".join([str(seed), *keys]).encode()).hexdigest()
    return torch.Generator(device=device).manual_seed(int(digest[:15], 16))
