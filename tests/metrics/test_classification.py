"""Tests for robustbnn.metrics.classification on hand examples."""

from __future__ import annotations

import math

import pytest
import torch

from robustbnn.metrics.classification import (
    accuracy,
    ece,
    log_predictive_probs,
    nll,
    predictive_probs,
)


def test_accuracy_hand_example() -> None:
    probs = torch.tensor([[0.9, 0.1, 0.0], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7], [0.4, 0.35, 0.25]])
    assert accuracy(probs, torch.tensor([0, 1, 1, 2])).item() == pytest.approx(0.5)
    assert accuracy(probs, torch.tensor([0, 1, 2, 0])).item() == 1.0


def test_nll_hand_example() -> None:
    probs = torch.tensor([[0.5, 0.5], [0.1, 0.9], [0.8, 0.2]], dtype=torch.float64)
    expected = -(math.log(0.5) + math.log(0.9) + math.log(0.2)) / 3
    assert nll(probs, torch.tensor([1, 1, 1])).item() == pytest.approx(expected, rel=1e-12)


def test_nll_of_zero_probability_is_finite() -> None:
    probs = torch.tensor([[1.0, 0.0]])
    out = nll(probs, torch.tensor([1]))
    assert torch.isfinite(out)
    assert out.item() == pytest.approx(-math.log(torch.finfo(torch.float32).tiny))


def test_nll_is_differentiable() -> None:
    probs = torch.tensor([[0.3, 0.7], [0.6, 0.4]], requires_grad=True)
    nll(probs, torch.tensor([1, 1])).backward()
    assert probs.grad is not None and torch.isfinite(probs.grad).all()


def test_ece_hand_example() -> None:
    # n_bins=5: confidences 0.9, 0.9 -> bin (0.8, 1], accuracy 1/2, gap |0.5 - 0.9| = 0.4;
    # 0.5, 0.5 -> bin (0.4, 0.6], accuracy 1, gap 0.5. ECE = (2·0.4 + 2·0.5) / 4 = 0.45.
    probs = torch.tensor(
        [[0.9, 0.05, 0.05], [0.05, 0.9, 0.05], [0.5, 0.3, 0.2], [0.5, 0.2, 0.3]],
        dtype=torch.float64,
    )
    y = torch.tensor([0, 0, 0, 0])
    assert ece(probs, y, n_bins=5).item() == pytest.approx(0.45, abs=1e-12)
    # With one bin the gaps of the two groups cancel: |3/4 - 0.7| = 0.05.
    assert ece(probs, y, n_bins=1).item() == pytest.approx(0.05, abs=1e-12)


def test_ece_perfectly_calibrated_is_zero() -> None:
    # 10 examples at confidence 0.8 with 8 correct, 4 at confidence 0.5 with 2 correct
    # (whichever class wins the 0.5 tie, exactly 2 of those 4 labels match it).
    probs = torch.tensor([[0.8, 0.2]] * 10 + [[0.5, 0.5]] * 4, dtype=torch.float64)
    y = torch.tensor([0] * 8 + [1] * 2 + [0, 0, 1, 1])
    assert ece(probs, y).item() == pytest.approx(0.0, abs=1e-12)


def test_ece_bins_are_right_closed() -> None:
    # 0.6 sits on an edge of the 5-bin grid; it belongs to (0.4, 0.6], with the 0.5 example.
    probs = torch.tensor([[0.6, 0.3, 0.1], [0.5, 0.3, 0.2]], dtype=torch.float64)
    y = torch.tensor([1, 0])  # gaps -0.6 and +0.5 partly cancel only if they share a bin
    assert ece(probs, y, n_bins=5).item() == pytest.approx(0.05, abs=1e-12)


def test_predictive_probs_equals_mean_of_softmax() -> None:
    g = torch.Generator().manual_seed(0)
    logits = 4 * torch.randn(3, 5, 7, generator=g, dtype=torch.float64)
    expected = torch.softmax(logits, dim=-1).mean(dim=0)
    out = predictive_probs(logits)
    assert out.shape == (5, 7)
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(log_predictive_probs(logits), expected.log())


def test_log_predictive_probs_stable_for_extreme_logits() -> None:
    logits = torch.tensor([[[0.0, 200.0]], [[0.0, 150.0]]])  # softmax underflows for class 0
    out = log_predictive_probs(logits)
    assert torch.isfinite(out).all()
    assert out[0, 0].item() == pytest.approx(-150 - math.log(2), rel=1e-5)


@pytest.mark.parametrize(
    ("probs", "y", "match"),
    [
        (torch.ones(3), torch.tensor([0, 1, 0]), r"probs_mean must have shape \(B, C\), got"),
        (torch.ones(3, 2), torch.tensor([0, 1]), r"y must have shape \(B,\) = \(3,\).*got \(2,\)"),
        (torch.ones(2, 2), torch.tensor([0.0, 1.0]), r"integer class indices.*torch.float32"),
        (torch.ones(3, 2), torch.tensor([0, 2, -1]), r"in \[0, 2\).*found \[2, -1\]"),
        (torch.ones(0, 2), torch.tensor([], dtype=torch.long), r"at least one example"),
    ],
)
def test_invalid_inputs_raise(probs: torch.Tensor, y: torch.Tensor, match: str) -> None:
    for metric in (accuracy, nll, ece):
        with pytest.raises(ValueError, match=match):
            metric(probs, y)


@pytest.mark.parametrize("n_bins", [0, -3, 2.5, True])
def test_ece_invalid_n_bins_raises(n_bins: object) -> None:
    with pytest.raises(ValueError, match="n_bins must be a positive integer"):
        ece(torch.tensor([[0.6, 0.4]]), torch.tensor([0]), n_bins=n_bins)  # type: ignore[arg-type]


def test_predictive_probs_rejects_non_3d_logits() -> None:
    with pytest.raises(ValueError, match=r"shape \(S, B, C\).*got \(5, 7\)"):
        predictive_probs(torch.zeros(5, 7))


def test_bin_sums_match_a_per_bin_loop_and_pass_gradients() -> None:
    # The per-bin sums of ECE and the reliability diagram, taken in order on the CPU (CUDA's
    # index_add adds in no fixed order: on an H200 two reruns differed in the 8th digit).
    from robustbnn.metrics.classification import bin_sums

    gen = torch.Generator().manual_seed(0)
    bins = torch.randint(0, 7, (50,), generator=gen)
    values = torch.rand(50, generator=gen, dtype=torch.float64, requires_grad=True)
    out = bin_sums(bins, values, 9)
    expected = [sum(values[i].item() for i in range(50) if bins[i] == b) for b in range(9)]
    assert out.shape == (9,) and out.dtype == torch.float64
    assert out.tolist() == pytest.approx(expected, rel=1e-12)
    assert out[7:].tolist() == [0.0, 0.0]
    out.sum().backward()
    assert torch.equal(values.grad, torch.ones(50, dtype=torch.float64))
