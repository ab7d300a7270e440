"""Extra uncertainty measures, checked against a brute-force reference."""

from __future__ import annotations

import math

import torch

from robustbnn.ood.extra import EXTRA_MEASURES, log_mean_entropy_bits
from tests._registrations import ROOT, registered_in

EXTRA_FILE = ROOT / "robustbnn" / "ood" / "extra.py"


def test_log_mean_entropy_bits_matches_brute_force() -> None:
    gen = torch.Generator().manual_seed(0)
    probs = torch.softmax(torch.randn(7, 5, 10, generator=gen) * 3, -1)  # (S, B, C)
    out = log_mean_entropy_bits(probs)
    assert out.shape == (5,)
    for b in range(5):
        q = [math.exp(sum(math.log(probs[s, b, c].item()) for s in range(7)) / 7)
             for c in range(10)]
        brute = -sum(v * math.log2(v) for v in q)  # not renormalised, as the tutorial
        assert abs(out[b].item() - brute) < 1e-5


def test_geometric_mean_is_below_the_arithmetic_one_on_disagreeing_samples() -> None:
    probs = torch.tensor([[[1.0, 0.0]], [[0.0, 1.0]]])  # two confident, opposite samples
    assert log_mean_entropy_bits(probs).item() < 1e-15  # q ≈ 0 everywhere, no renormalising
    assert log_mean_entropy_bits(torch.full((2, 1, 2), 0.5)).item() == 1.0  # one bit
    assert EXTRA_MEASURES.names() == registered_in(EXTRA_FILE, "EXTRA_MEASURES.register")
    assert EXTRA_MEASURES.get("log_mean_entropy_bits") is log_mean_entropy_bits
