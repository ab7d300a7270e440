"""Tests for robustbnn.ood.uncertainty: hand examples, identities and gradient flow."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

from robustbnn.ood.uncertainty import (
    UNCERTAINTIES,
    all_measures,
    bald,
    builtin_measures,
    expected_entropy,
    max_prob,
    mean_std,
    predictive_entropy,
    variation_ratio,
)
from tests._registrations import ROOT, registered_in

ALL_NAMES = UNCERTAINTIES.names()
NAMES = list(builtin_measures(logits=False))  # the probability measures (logit ones: test_energy)
DIFFERENTIABLE = [n for n in NAMES if n != "variation_ratio"]


def _random_probs(seed: int, shape: tuple[int, int, int] = (3, 5, 7)) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.softmax(3 * torch.randn(shape, generator=g, dtype=torch.float64), dim=-1)


def _one_hot(classes: list[list[int]], num_classes: int) -> torch.Tensor:
    """One-hot probs of shape (S, B, C) from per-sample, per-example classes."""
    return torch.nn.functional.one_hot(torch.tensor(classes), num_classes).double()


def test_registry_order_and_all_measures() -> None:
    assert ALL_NAMES == registered_in(ROOT / "robustbnn" / "ood" / "uncertainty.py",
                                      "UNCERTAINTIES.register")
    assert {"max_prob", "predictive_entropy", "bald", "variation_ratio"} <= set(NAMES)
    logits = 3 * torch.randn(3, 5, 7, generator=torch.Generator().manual_seed(0),
                             dtype=torch.float64)
    probs = logits.softmax(-1)
    scores = all_measures(probs, logits)
    assert list(scores) == ALL_NAMES
    for name in NAMES:
        torch.testing.assert_close(scores[name], UNCERTAINTIES.get(name)(probs))


@pytest.mark.parametrize("name", NAMES)
def test_shape_dtype_and_finite(name: str) -> None:
    probs = _random_probs(1)  # S=3, B=5, C=7: a swapped axis changes the shape
    out = UNCERTAINTIES.get(name)(probs)
    assert out.shape == (5,)
    assert out.dtype == probs.dtype
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("shape", [(3, 5), (3, 5, 7, 1), ()])
def test_non_3d_input_raises(name: str, shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=re.escape(f"(S, B, C), got shape {tuple(shape)}")):
        UNCERTAINTIES.get(name)(torch.ones(shape))


def test_empty_sample_axis_raises() -> None:
    with pytest.raises(ValueError, match=r"at least one sample.*\(0, 5, 7\)"):
        all_measures(torch.ones(0, 5, 7))


@pytest.mark.parametrize("seed", range(5))
def test_mutual_information_nonnegative_and_decomposes(seed: int) -> None:
    probs = _random_probs(seed, (4, 50, 3))
    mi = bald(probs)
    assert (mi >= 0).all()
    torch.testing.assert_close(predictive_entropy(probs), expected_entropy(probs) + mi)


def test_mutual_information_zero_when_samples_agree() -> None:
    probs = _random_probs(2)[:1].expand(6, 5, 7)  # six identical samples
    torch.testing.assert_close(bald(probs), torch.zeros(5, dtype=probs.dtype))
    torch.testing.assert_close(mean_std(probs), torch.zeros(5, dtype=probs.dtype))


def test_deterministic_samples_score_exactly_zero_not_float_noise() -> None:
    # 100 copies of one float32 softmax: H[p̄] and E_s H[p_s] round differently by up to
    # ~6e-7, which used to rank a deterministic model's inputs (adversary-detection AUROC
    # 0.49-0.53 instead of 0.5). Identical samples must give exactly 0.
    g = torch.Generator().manual_seed(0)
    logits = 3 * torch.randn(1, 1000, 10, generator=g)
    probs = logits.softmax(-1).expand(100, -1, -1).contiguous()
    assert torch.equal(bald(probs), torch.zeros(1000))
    assert torch.equal(mean_std(probs), torch.zeros(1000))
    # One differing sample keeps a positive score for that input only.
    probs[7, 3] = probs[7, 3].roll(1)
    scores = bald(probs)
    assert scores[3] > 0.01 and scores[torch.arange(1000) != 3].eq(0).all()


def test_mutual_information_ln2_for_disagreeing_one_hots() -> None:
    probs = _one_hot([[0], [1]], 2)  # S=2, B=1, C=2
    torch.testing.assert_close(bald(probs), torch.tensor([math.log(2)], dtype=probs.dtype))
    torch.testing.assert_close(expected_entropy(probs), torch.zeros(1, dtype=probs.dtype))


def test_entropies_on_uniform_are_log_c() -> None:
    probs = torch.full((3, 5, 7), 1 / 7, dtype=torch.float64)
    log_c = torch.full((5,), math.log(7), dtype=torch.float64)
    torch.testing.assert_close(predictive_entropy(probs), log_c)
    torch.testing.assert_close(expected_entropy(probs), log_c)


@pytest.mark.parametrize("name", NAMES)
def test_higher_means_more_uncertain(name: str) -> None:
    # Example 0: every sample one-hot on class 2 (certain); example 1: every sample uniform
    # (aleatoric only); example 2: one-hot samples that disagree, mean uniform (epistemic).
    certain = _one_hot([[2], [2], [2]], 3)
    uniform = torch.full((3, 1, 3), 1 / 3, dtype=torch.float64)
    disagree = _one_hot([[0], [1], [2]], 3)
    scores = UNCERTAINTIES.get(name)(torch.cat([certain, uniform, disagree], dim=1))
    assert scores[0] == 0
    # Disagreement measures are blind to identical uniform samples; expected entropy is
    # blind to confident samples that disagree. Every measure sees at least one of the two.
    if name in {"bald", "mean_std", "variation_ratio"}:
        assert scores[1] == pytest.approx(0, abs=1e-12)
    else:
        assert scores[1] > scores[0]
    if name == "expected_entropy":
        assert scores[2] == 0
    else:
        assert scores[2] > scores[0]


def test_max_prob_hand_example() -> None:
    probs = torch.tensor([[[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]], [[0.5, 0.4, 0.1], [0.3, 0.3, 0.4]]])
    # Mean probabilities: [0.6, 0.3, 0.1] and [0.2, 0.2, 0.6].
    torch.testing.assert_close(max_prob(probs), torch.tensor([0.4, 0.4]))


def test_variation_ratio_counts_the_mode() -> None:
    # B=3 examples, S=5 samples: per-sample argmax classes per example.
    votes = [[0, 1, 2], [0, 1, 2], [0, 2, 2], [1, 3, 0], [0, 3, 1]]  # (S, B)
    probs = 0.5 * _one_hot(votes, 4) + 0.5 / 4  # soft, argmax unchanged
    # Example 0: 0,0,0,1,0 -> 4/5; example 1: 1,1,2,3,3 -> 2/5; example 2: 2,2,2,0,1 -> 3/5.
    expected = torch.tensor([1 - 4 / 5, 1 - 2 / 5, 1 - 3 / 5], dtype=torch.float64)
    torch.testing.assert_close(variation_ratio(probs), expected)
    # BHN's "variation ratio" (max_prob) is a different number on the same input.
    assert not torch.allclose(max_prob(probs), expected)


def test_mean_std_matches_numpy_population_std() -> None:
    probs = _random_probs(3)
    expected = np.std(probs.numpy(), axis=0, ddof=0).mean(axis=-1)
    np.testing.assert_allclose(mean_std(probs).numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
@pytest.mark.parametrize("with_zeros", [False, True])
def test_gradient_flows_and_is_finite(name: str, with_zeros: bool) -> None:
    probs = _random_probs(4)
    if with_zeros:  # exact zeros (underflowed softmax) and agreeing samples
        probs = torch.cat([probs, _one_hot([[1]] * 3, 7)], dim=1)
    probs.requires_grad_(True)
    out = UNCERTAINTIES.get(name)(probs)
    assert out.requires_grad
    out.sum().backward()
    assert probs.grad is not None and torch.isfinite(probs.grad).all()
    assert probs.grad.abs().sum() > 0


def test_variation_ratio_accepts_requires_grad_but_is_piecewise_constant() -> None:
    probs = _random_probs(5).requires_grad_(True)
    out = variation_ratio(probs)
    assert out.shape == (5,) and not out.requires_grad
    assert all_measures(probs, names=NAMES)["bald"].requires_grad
