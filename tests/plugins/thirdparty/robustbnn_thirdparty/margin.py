"""``tp_margin``: one minus the margin of the predictive, registered in ``UNCERTAINTIES``.

u = 1 - (p̄₍₁₎ - p̄₍₂₎), the gap between the two largest mean probabilities turned around, so
higher means more uncertain (the registry's direction).

References:
    Scheffer, Decomain & Wrobel, "Active Hidden Markov Models for Information Extraction",
    IDA 2001 (margin sampling).
"""

from __future__ import annotations

from torch import Tensor

from robustbnn.ood.uncertainty import UNCERTAINTIES


def margin(probs: Tensor) -> Tensor:
    """Probabilities (S, B, C) -> 1 - (top-1 - top-2 of the mean probabilities), shape (B,)."""
    top = probs.mean(0).topk(2, dim=-1).values  # (B, 2)
    return 1 - (top[:, 0] - top[:, 1])


UNCERTAINTIES.register("tp_margin", margin)
