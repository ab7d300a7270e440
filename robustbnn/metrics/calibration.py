"""Calibration metrics of the predictive: the Brier score and reliability-diagram bins.

Inputs follow :mod:`robustbnn.metrics.classification`: predictive probabilities ``probs`` of
shape (B, C) (e.g. from :func:`~robustbnn.metrics.classification.predictive_probs`) and
integer labels ``y`` of shape (B,). :func:`brier` returns a 0-d tensor like ``nll`` and
``ece`` (call ``.item()`` for a float); lower is better. :func:`reliability` returns the bins
behind :func:`~robustbnn.metrics.classification.ece`, binned identically, so
``reliability(p, y).ece`` equals ``ece(p, y)``.

Brier convention. ``brier`` is the multiclass score of Brier (1950),
(1/B) Σ_i Σ_c (p̄_ic - 1[c = y_i])², in [0, 2], not divided by C. It is the number that Ovadia
et al. (2019) plot: their released ``metrics_lib.brier_scores`` computes
Σ_c p_c² - 2 p_y, which is this score minus the constant 1 (their text writes a 1/|Y|
factor that the code does not apply), and it equals scikit-learn's
``brier_score_loss`` for more than two classes. Variants divide by C (the 1/|Y| form) or,
for two classes, by 2; torchmetrics has no multiclass Brier score.

References:
    Brier, "Verification of forecasts expressed in terms of probability", Monthly Weather
    Review 78(1), 1950.
    Ovadia et al., "Can You Trust Your Model's Uncertainty? Evaluating Predictive Uncertainty
    Under Dataset Shift", NeurIPS 2019, https://arxiv.org/abs/1906.02530.
    Guo et al., "On Calibration of Modern Neural Networks", ICML 2017,
    https://arxiv.org/abs/1706.04599.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from robustbnn.metrics.classification import _check_predictions, bin_sums

__all__ = ["Reliability", "brier", "brier_per_example", "reliability"]


def brier(probs_mean: Tensor, y: Tensor) -> Tensor:
    """Multiclass Brier score, (1/B) Σ_i Σ_c (p̄_ic - 1[c = y_i])² (sum over classes).

    Args:
        probs_mean: Predictive probabilities, shape (B, C).
        y: Class indices, shape (B,).

    Returns:
        Mean Brier score in [0, 2] for rows that sum to 1, a 0-d tensor; 0 is a confident
        correct prediction for every example. Differentiable in ``probs_mean``.

    Raises:
        ValueError: On shapes that do not match or labels outside [0, C).

    Example:
        >>> probs = torch.tensor([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
        >>> brier(probs, torch.tensor([0, 1]))  # ((0.25 + 0.25) + (1 + 1)) / 2
        tensor(1.2500)
    """
    return brier_per_example(probs_mean, y).mean()


def brier_per_example(probs_mean: Tensor, y: Tensor) -> Tensor:
    """Each example's Brier score, Σ_c (p̄_ic - 1[c = y_i])², shape (B,); :func:`brier` is
    their mean.

    Raises:
        ValueError: On shapes that do not match or labels outside [0, C).
    """
    _check_predictions(probs_mean, y)
    onehot = torch.zeros_like(probs_mean).scatter_(-1, y.long().unsqueeze(-1), 1.0)  # (B, C)
    return (probs_mean - onehot).square().sum(dim=-1)


@dataclass(frozen=True)
class Reliability:
    """Equal-width confidence bins of a reliability diagram.

    Bin b covers (edges[b], edges[b + 1]]; the first bin also takes confidence 0, the
    convention of :func:`~robustbnn.metrics.classification.ece`.

    Args:
        edges: Bin edges 0 = e_0 < ... < e_n = 1, shape (n_bins + 1,).
        confidence: Mean confidence max_c p̄_c of the examples in each bin, shape (n_bins,);
            NaN for an empty bin.
        accuracy: Fraction of those examples whose most probable class is the label, shape
            (n_bins,); NaN for an empty bin.
        counts: Number of examples in each bin, int64, shape (n_bins,); sums to B.
    """

    edges: Tensor
    confidence: Tensor
    accuracy: Tensor
    counts: Tensor

    @property
    def ece(self) -> Tensor:
        """Σ_b (n_b / B) |acc_b - conf_b| over non-empty bins: ECE from these bins."""
        filled = self.counts > 0
        weights = self.counts[filled].to(self.confidence.dtype) / self.counts.sum()
        return (weights * (self.accuracy[filled] - self.confidence[filled]).abs()).sum()


def reliability(probs_mean: Tensor, y: Tensor, *, n_bins: int = 15) -> Reliability:
    """Per-bin confidence, accuracy and counts, binned exactly as ``ece`` bins.

    Args:
        probs_mean: Predictive probabilities, shape (B, C).
        y: Class indices, shape (B,).
        n_bins: Number of equal-width bins over [0, 1].

    Returns:
        A :class:`Reliability` on the device and in the dtype of ``probs_mean`` (counts
        int64), detached: the bins are for reports and figures, not for gradients.

    Raises:
        ValueError: On shapes that do not match, labels outside [0, C) or ``n_bins < 1``.

    Example:
        >>> probs = torch.tensor([[0.9, 0.1], [0.9, 0.1], [0.6, 0.4], [0.6, 0.4]])
        >>> r = reliability(probs, torch.tensor([0, 0, 0, 1]), n_bins=5)
        >>> r.counts.tolist(), r.accuracy[2].item(), r.ece
        ([0, 0, 2, 0, 2], 0.5, tensor(0.1000))
    """
    _check_predictions(probs_mean, y)
    if isinstance(n_bins, bool) or not isinstance(n_bins, int) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    probs_mean = probs_mean.detach()
    confidence, predicted = probs_mean.max(dim=-1)  # (B,)
    correct = (predicted == y).to(probs_mean.dtype)
    edges = torch.linspace(0, 1, n_bins + 1, dtype=probs_mean.dtype, device=probs_mean.device)
    bins = torch.bucketize(confidence, edges[1:-1])  # right-closed, as in ece()
    counts = torch.bincount(bins, minlength=n_bins)  # (n_bins,) int64
    conf_sum = bin_sums(bins, confidence, n_bins)
    correct_sum = bin_sums(bins, correct, n_bins)
    n = counts.to(probs_mean.dtype)
    nan = torch.full_like(n, float("nan"))
    filled = counts > 0
    return Reliability(
        edges=edges,
        confidence=torch.where(filled, conf_sum / n.clamp_min(1), nan),
        accuracy=torch.where(filled, correct_sum / n.clamp_min(1), nan),
        counts=counts,
    )
