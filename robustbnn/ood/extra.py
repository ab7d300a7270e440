"""Uncertainty measures a protocol asks for by name, beyond the six every run computes.

``EXTRA_MEASURES`` holds measures that only some papers use; a bench config lists the ones it
wants in ``extra_measures`` and they are scored like the defaults (higher = more uncertain).

=========================  =================================================================
``log_mean_entropy_bits``  −Σ_c q_c log₂ q_c with q = exp((1/S) Σ_s log p_s): the entropy in
                           bits of the geometric mean of the samples' probabilities, not
                           renormalised; the Bayes by Backprop PyTorch tutorial's measure on
                           N(0, 1) noise (docs/protocols.md §4.4)
=========================  =================================================================
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import Tensor

from robustbnn.ood.energy import check_samples
from robustbnn.registry import Registry

__all__ = ["EXTRA_MEASURES", "log_mean_entropy_bits"]

EXTRA_MEASURES = Registry[Callable[[Tensor], Tensor]]("extra uncertainty measure")


def log_mean_entropy_bits(probs: Tensor) -> Tensor:
    """Entropy in bits of exp(mean_s log p_s), not renormalised (the BbB tutorial's measure).

    Args:
        probs: Per-sample class probabilities, shape (S, B, C).

    Returns:
        Scores, shape (B,).

    Example:
        >>> log_mean_entropy_bits(torch.full((3, 1, 2), 0.5))
        tensor([1.])
    """
    check_samples(probs, "probs")
    tiny = torch.finfo(probs.dtype).tiny
    q = probs.clamp_min(tiny).log().mean(dim=0).exp()  # (B, C)
    return -(q * q.log()).sum(dim=-1) / math.log(2.0)


EXTRA_MEASURES.register("log_mean_entropy_bits", log_mean_entropy_bits)
