"""Posterior fidelity metrics (robustbnn.metrics.fidelity) against brute-force loops."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from robustbnn.metrics.fidelity import (
    agreement,
    kl_from_reference,
    mc_predictive,
    total_variation,
)
from tests._helpers import seeded

S, B, C = 3, 6, 4  # distinct, so a swapped axis fails


def _probs(seed: int, zeros: bool = False) -> torch.Tensor:
    """Random probabilities (S, B, C); with ``zeros``, some exact zeros in every sample."""
    gen = seeded(seed)
    p = torch.rand(S, B, C, generator=gen, dtype=torch.float64) ** 3
    if zeros:
        p[:, ::2, 0] = 0.0  # class 0 of every other input
    return p / p.sum(-1, keepdim=True)


def _brute(p: np.ndarray, q: np.ndarray, floor: float = 1e-12) -> tuple[float, float, float]:
    """Agreement, total variation and KL(q ‖ p) by explicit loops over inputs and classes."""
    agree = tv = kl = 0.0
    for b in range(p.shape[0]):
        top_p = max(range(p.shape[1]), key=lambda c: (p[b, c], -c))  # first maximum
        top_q = max(range(q.shape[1]), key=lambda c: (q[b, c], -c))
        agree += top_p == top_q
        for c in range(p.shape[1]):
            tv += 0.5 * abs(p[b, c] - q[b, c])
            if q[b, c] > 0:
                kl += q[b, c] * (math.log(q[b, c]) - math.log(max(p[b, c], floor)))
    n = p.shape[0]
    return agree / n, tv / n, kl / n


def test_against_brute_force_on_random_probabilities() -> None:
    model = _probs(0)
    ref = _probs(1, zeros=True).mean(0)  # the reference has exact zeros: KL skips them
    pbar = mc_predictive(model)
    torch.testing.assert_close(pbar, torch.stack([model[s] for s in range(S)]).sum(0) / S)
    agree, tv, kl = _brute(pbar.numpy(), ref.numpy())
    assert 0 < agree < 1  # both branches of the comparison are exercised
    assert agreement(pbar, ref).item() == pytest.approx(agree, abs=1e-12)
    assert total_variation(pbar, ref).item() == pytest.approx(tv, abs=1e-12)
    assert kl_from_reference(pbar, ref).item() == pytest.approx(kl, abs=1e-12)


def test_kl_clamps_model_zeros_at_the_stated_floor() -> None:
    ref = _probs(2).mean(0)
    model = _probs(3, zeros=True).mean(0)  # the model gives no mass where the reference does
    for floor in (1e-12, 1e-6):
        expected = _brute(model.numpy(), ref.numpy(), floor)[2]
        assert kl_from_reference(model, ref, floor=floor).item() == pytest.approx(expected)
    assert kl_from_reference(model, ref).item() > kl_from_reference(model, ref, floor=1e-6).item()


def test_identical_predictives() -> None:
    p = _probs(4, zeros=True).mean(0)
    assert agreement(p, p).item() == 1.0
    assert total_variation(p, p).item() == 0.0
    assert kl_from_reference(p, p).item() == 0.0


def test_disjoint_one_hots() -> None:
    eye = torch.eye(C)[:3]  # (3, C), classes 0, 1, 2
    other = torch.eye(C)[[1, 2, 3]]
    assert agreement(eye, other).item() == 0.0
    assert total_variation(eye, other).item() == 1.0
    assert kl_from_reference(eye, other).item() == pytest.approx(-math.log(1e-12))


def test_ties_go_to_the_first_class() -> None:
    tied = torch.tensor([[0.5, 0.5, 0.0]])
    assert agreement(tied, torch.tensor([[0.6, 0.4, 0.0]])).item() == 1.0
    assert agreement(tied, torch.tensor([[0.4, 0.6, 0.0]])).item() == 0.0


@pytest.mark.parametrize(("probs", "reference", "match"), [
    (torch.full((B, C), 1 / C), torch.full((C, B), 1 / B), r"same shape \(B, C\)"),
    (torch.full((S, B, C), 1 / C), torch.full((S, B, C), 1 / C), r"shape \(B, C\)"),
    (torch.zeros(0, C), torch.zeros(0, C), "no empty axis"),
    (torch.full((B, C), 1 / C) - torch.eye(B, C), torch.full((B, C), 1 / C), "not logits"),
    (torch.full((B, C), 0.5), torch.full((B, C), 1 / C), "sum to 1"),
    (torch.full((B, C), float("nan")), torch.full((B, C), 1 / C), "finite"),
    (torch.ones(B, C, dtype=torch.long), torch.full((B, C), 1 / C), "floating point"),
])
def test_bad_inputs_are_named(probs: torch.Tensor, reference: torch.Tensor, match: str) -> None:
    for metric in (agreement, total_variation, kl_from_reference):
        with pytest.raises(ValueError, match=match):
            metric(probs, reference)


def test_mc_predictive_wants_samples_first() -> None:
    with pytest.raises(ValueError, match=r"shape \(S, B, C\)"):
        mc_predictive(torch.full((B, C), 1 / C))
    with pytest.raises(ValueError, match="floor must be > 0"):
        kl_from_reference(torch.full((B, C), 1 / C), torch.full((B, C), 1 / C), floor=0.0)
