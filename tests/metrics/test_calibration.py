"""Tests for robustbnn.metrics.calibration: Brier score and reliability bins.

Oracles (test-only): a brute-force NumPy loop, scikit-learn's ``brier_score_loss`` and
torchmetrics' ``mean_squared_error`` against the one-hot labels times C for the Brier score
(torchmetrics 1.x has no multiclass Brier score of its own), and torchmetrics'
``multiclass_calibration_error`` (norm="l1") for ECE.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics import brier_score_loss
from torchmetrics.functional import mean_squared_error
from torchmetrics.functional.classification import multiclass_calibration_error

from robustbnn.metrics.calibration import Reliability, brier, reliability
from robustbnn.metrics.classification import ece


def _random_predictions(n: int, c: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Softmax of scaled Gaussian logits (float64) and uniform labels, from their own stream."""
    g = torch.Generator().manual_seed(seed)
    probs = torch.softmax(3 * torch.randn(n, c, generator=g, dtype=torch.float64), dim=-1)
    return probs, torch.randint(0, c, (n,), generator=g)


def _brier_loop(probs: np.ndarray, y: np.ndarray) -> float:
    """(1/N) Σ_i Σ_c (p_ic - onehot_ic)², one term at a time."""
    total = 0.0
    for i in range(probs.shape[0]):
        for c in range(probs.shape[1]):
            total += (probs[i, c] - (1.0 if c == y[i] else 0.0)) ** 2
    return total / probs.shape[0]


@pytest.mark.parametrize(("n", "c", "seed"), [(37, 10, 0), (200, 3, 1), (5, 7, 2)])
def test_brier_matches_brute_force_and_sklearn(n: int, c: int, seed: int) -> None:
    probs, y = _random_predictions(n, c, seed)
    out = brier(probs, y)
    assert out.ndim == 0
    assert out.item() == pytest.approx(_brier_loop(probs.numpy(), y.numpy()), abs=1e-6)
    # scikit-learn keeps the [0, 2] sum-over-classes range for C > 2 (scale_by_half="auto").
    if c > 2:
        expected = brier_score_loss(y.numpy(), probs.numpy(), labels=np.arange(c))
        assert out.item() == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(("n", "c", "seed"), [(300, 10, 0), (97, 3, 1), (41, 2, 2)])
def test_brier_matches_torchmetrics_mean_squared_error(n: int, c: int, seed: int) -> None:
    # The Brier score sums over classes: C times the mean over all N x C squared errors.
    probs, y = _random_predictions(n, c, seed)
    onehot = torch.nn.functional.one_hot(y, c).to(probs.dtype)
    expected = c * mean_squared_error(probs, onehot)
    assert brier(probs, y).item() == pytest.approx(expected.item(), abs=1e-6)
    single = probs.float()  # the bench's float32 predictive
    assert brier(single, y).item() == pytest.approx(expected.item(), abs=1e-6)


def test_brier_hand_values_and_range() -> None:
    y = torch.tensor([0, 2])
    assert brier(torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]), y).item() == 0.0
    assert brier(torch.tensor([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]), y).item() == 2.0
    uniform = torch.full((2, 4), 0.25, dtype=torch.float64)
    # (1 - 1/4)² + 3 (1/4)² = 3/4 = 1 - 1/C for the uniform predictive.
    assert brier(uniform, y).item() == pytest.approx(0.75, abs=1e-12)


def test_brier_is_differentiable() -> None:
    probs = torch.tensor([[0.3, 0.7], [0.6, 0.4]], requires_grad=True)
    brier(probs, torch.tensor([1, 1])).backward()
    # d/dp (p - onehot)² / B = 2 (p - onehot) / B
    expected = torch.tensor([[0.3, -0.3], [0.6, -0.6]])
    torch.testing.assert_close(probs.grad, expected)


@pytest.mark.parametrize(("n", "c", "n_bins", "seed"),
                         [(300, 10, 15, 0), (97, 3, 10, 1), (41, 7, 1, 2), (500, 5, 20, 3)])
def test_ece_matches_torchmetrics_and_reliability(n: int, c: int, n_bins: int,
                                                  seed: int) -> None:
    # Random confidences never sit on a bin edge, where torchmetrics' bins are left-closed
    # [e_b, e_b+1) while ece() and reliability() use right-closed (e_b, e_b+1].
    probs, y = _random_predictions(n, c, seed)
    expected = multiclass_calibration_error(probs, y, num_classes=c, n_bins=n_bins, norm="l1")
    assert ece(probs, y, n_bins=n_bins).item() == pytest.approx(expected.item(), abs=1e-6)
    rel = reliability(probs, y, n_bins=n_bins)
    assert rel.ece.item() == pytest.approx(expected.item(), abs=1e-6)
    assert rel.ece.item() == pytest.approx(ece(probs, y, n_bins=n_bins).item(), abs=1e-12)


def test_reliability_bins_brute_force() -> None:
    probs, y = _random_predictions(123, 6, 4)
    rel = reliability(probs, y, n_bins=8)
    assert isinstance(rel, Reliability)
    assert rel.edges.shape == (9,) and rel.confidence.shape == rel.accuracy.shape == (8,)
    assert rel.counts.dtype == torch.int64 and rel.counts.sum().item() == 123
    conf, pred = probs.max(dim=-1)
    for b in range(8):
        lo, hi = b / 8, (b + 1) / 8
        member = (conf > lo) & (conf <= hi)
        assert rel.counts[b].item() == member.sum().item()
        if member.any():
            assert rel.confidence[b].item() == pytest.approx(conf[member].mean().item())
            hit = (pred[member] == y[member]).double().mean().item()
            assert rel.accuracy[b].item() == pytest.approx(hit)
        else:
            assert rel.confidence[b].isnan() and rel.accuracy[b].isnan()


def test_reliability_perfect_calibration_gives_zero_ece() -> None:
    # Confidence 0.8 with 8 of 10 correct; confidence 0.5 with 2 of 4 correct.
    probs = torch.tensor([[0.8, 0.2]] * 10 + [[0.5, 0.5]] * 4, dtype=torch.float64)
    y = torch.tensor([0] * 8 + [1] * 2 + [0, 0, 1, 1])
    rel = reliability(probs, y)
    assert rel.ece.item() == pytest.approx(0.0, abs=1e-12)
    filled = rel.counts > 0
    torch.testing.assert_close(rel.accuracy[filled], rel.confidence[filled])


def test_reliability_empty_bins_and_edges_follow_ece() -> None:
    # n_bins=5, edges 0, .2, .4, .6, .8, 1. Confidence 0.6 sits on an edge and belongs to
    # (0.4, 0.6] with 0.5; 1.0 belongs to (0.8, 1]; bins (0, .2] .. (.6, .8] stay empty.
    probs = torch.tensor([[0.6, 0.3, 0.1], [0.5, 0.3, 0.2], [1.0, 0.0, 0.0]],
                         dtype=torch.float64)
    y = torch.tensor([1, 0, 0])
    rel = reliability(probs, y, n_bins=5)
    assert rel.counts.tolist() == [0, 0, 2, 0, 1]
    assert rel.confidence[2].item() == pytest.approx(0.55)
    assert rel.accuracy[2].item() == pytest.approx(0.5)
    assert rel.confidence[4].item() == 1.0 and rel.accuracy[4].item() == 1.0
    assert rel.confidence[[0, 1, 3]].isnan().all() and rel.accuracy[[0, 1, 3]].isnan().all()
    assert rel.ece.item() == pytest.approx(ece(probs, y, n_bins=5).item(), abs=1e-12)
    assert rel.ece.item() == pytest.approx(2 / 3 * 0.05, abs=1e-12)


def test_reliability_first_bin_takes_zero_confidence() -> None:
    # Only reachable with non-normalised scores, but the binning must still match ece().
    probs = torch.tensor([[0.0, 0.0], [0.9, 0.1]], dtype=torch.float64)
    y = torch.tensor([0, 0])
    rel = reliability(probs, y, n_bins=4)
    assert rel.counts.tolist() == [1, 0, 0, 1]
    assert rel.ece.item() == pytest.approx(ece(probs, y, n_bins=4).item(), abs=1e-12)


def test_reliability_is_detached_and_keeps_dtype() -> None:
    probs = torch.tensor([[0.3, 0.7], [0.6, 0.4]], requires_grad=True)
    rel = reliability(probs, torch.tensor([1, 1]), n_bins=3)
    assert not rel.confidence.requires_grad and rel.confidence.dtype == torch.float32


@pytest.mark.parametrize(
    ("probs", "y", "match"),
    [
        (torch.ones(3), torch.tensor([0, 1, 0]), r"probs_mean must have shape \(B, C\), got"),
        (torch.ones(3, 2), torch.tensor([0, 1]), r"y must have shape \(B,\) = \(3,\).*got \(2,\)"),
        (torch.ones(3, 2), torch.tensor([0, 2, -1]), r"in \[0, 2\).*found \[2, -1\]"),
    ],
)
def test_invalid_inputs_raise(probs: torch.Tensor, y: torch.Tensor, match: str) -> None:
    for metric in (brier, reliability):
        with pytest.raises(ValueError, match=match):
            metric(probs, y)


@pytest.mark.parametrize("n_bins", [0, -3, 2.5, True])
def test_reliability_invalid_n_bins_raises(n_bins: object) -> None:
    with pytest.raises(ValueError, match="n_bins must be a positive integer"):
        reliability(torch.tensor([[0.6, 0.4]]), torch.tensor([0]), n_bins=n_bins)  # type: ignore[arg-type]
