"""Worst-of-k evaluation: the three numbers against a brute-force count, and their order."""

from __future__ import annotations

import itertools

import pytest
import torch

from robustbnn.contract.predict import Evaluation
from robustbnn.metrics.worst_of_k import k_predictions, summarise, worst_of_k
from tests.attacks._models import SHAPE, NoisyLinear, linear


def _brute(preds: torch.Tensor, y: torch.Tensor) -> tuple[float, float, float]:
    k, b = preds.shape
    expected = sum(int(preds[i, j] == y[j]) for i in range(k) for j in range(b)) / (k * b)
    all_k = sum(all(preds[i, j] == y[j] for i in range(k)) for j in range(b)) / b
    flips = []
    for j in range(b):
        pairs = list(itertools.permutations(range(k), 2))
        flips.append(sum(int(preds[i, j] != preds[m, j]) for i, m in pairs) / len(pairs))
    return expected, all_k, sum(flips) / b


@pytest.mark.parametrize("k", [2, 3, 7])
def test_summary_matches_brute_force(k: int) -> None:
    g = torch.Generator().manual_seed(k)
    preds = torch.randint(0, 4, (k, 11), generator=g)
    y = torch.randint(0, 4, (11,), generator=g)
    got = summarise(preds, y)
    assert got == pytest.approx(_brute(preds, y), abs=1e-12)
    assert got.all_k_accuracy <= got.expected_accuracy


def test_one_evaluation_has_no_flip_probability() -> None:
    got = summarise(torch.tensor([[0, 1, 2]]), torch.tensor([0, 1, 1]))
    assert got.expected_accuracy == got.all_k_accuracy == pytest.approx(2 / 3)
    assert got.flip_probability != got.flip_probability  # NaN: undefined for k = 1


def test_deterministic_model_all_k_equals_expected() -> None:
    x = torch.rand(30, *SHAPE, generator=torch.Generator().manual_seed(0))
    y = torch.randint(0, 7, (30,), generator=torch.Generator().manual_seed(1))
    got = worst_of_k(linear(), x, y, Evaluation(3, torch.Generator().manual_seed(2)), k=5)
    assert got.all_k_accuracy == got.expected_accuracy
    assert got.flip_probability == 0.0


def test_stochastic_model_all_k_below_expected_and_reproducible() -> None:
    model = NoisyLinear(sigma=3.0)
    x = torch.rand(60, *SHAPE, generator=torch.Generator().manual_seed(0))
    y = model.sample_logits(x, 50, generator=torch.Generator().manual_seed(1)).mean(0).argmax(-1)
    runs = [worst_of_k(model, x, y, Evaluation(2, torch.Generator().manual_seed(3)), k=10)
            for _ in range(2)]
    assert runs[0] == runs[1]
    assert runs[0].all_k_accuracy < runs[0].expected_accuracy
    assert 0 < runs[0].flip_probability < 1


def test_k_predictions_shape_and_errors() -> None:
    x = torch.rand(4, *SHAPE)
    assert k_predictions(linear(), x, Evaluation(2), k=3).shape == (3, 4)
    with pytest.raises(ValueError, match="k >= 1"):
        k_predictions(linear(), x, Evaluation(2), k=0)
    with pytest.raises(ValueError, match="s_eval >= 1"):
        Evaluation(0)
