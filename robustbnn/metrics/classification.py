"""Classification metrics of the Bayesian model average, on torch tensors.

The predictive of a Monte Carlo model is the mean of the per-sample softmaxes,
p̄ = (1/S) Σ_s softmax(logits_s), of shape (B, C): :func:`predictive_probs` computes it from
logits (S, B, C) in log space, and the metrics take it with integer labels ``y`` of shape
(B,). Metrics return 0-d tensors on the input's device (call ``.item()`` for a float);
nothing is detached, so :func:`nll` can also serve as a loss. Directions: ``accuracy``
higher is better; ``nll`` and ``ece`` lower is better (``report/schema.py``).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["bin_sums", "accuracy", "ece", "log_mean_exp", "log_predictive_probs", "nll",
           "nll_per_example",
           "predictive_probs"]


def _check_predictions(probs_mean: Tensor, y: Tensor) -> None:
    """Raise ValueError unless probs_mean is (B, C) and y holds B class indices in [0, C)."""
    if probs_mean.ndim != 2:
        raise ValueError(f"probs_mean must have shape (B, C), got {tuple(probs_mean.shape)}")
    if y.ndim != 1 or y.shape[0] != probs_mean.shape[0]:
        raise ValueError(
            f"y must have shape (B,) = ({probs_mean.shape[0]},) to match probs_mean, "
            f"got {tuple(y.shape)}"
        )
    if y.shape[0] == 0:
        raise ValueError("need at least one example, got an empty batch")
    if y.dtype.is_floating_point or y.dtype.is_complex or y.dtype == torch.bool:
        raise ValueError(f"y must hold integer class indices, got dtype {y.dtype}")
    bad = y[(y < 0) | (y >= probs_mean.shape[1])]
    if bad.numel():
        raise ValueError(
            f"y must be in [0, {probs_mean.shape[1]}) for C={probs_mean.shape[1]} classes, "
            f"found {bad[:5].tolist()}"
        )


def log_mean_exp(values: Tensor, dim: int = 0) -> Tensor:
    """log mean_s exp(values_s) along ``dim``, as logsumexp − log S: a Monte Carlo average in
    log space.

    The one home of this step: the predictive (:func:`log_predictive_probs`), the attacks'
    ``"predictive"`` objective and the training losses of the matrix-normal and BB-α models
    all call it.

    Args:
        values: Per-sample log-values, with the S samples along ``dim`` (S ≥ 1).
        dim: The sample axis.

    Returns:
        ``values`` with ``dim`` reduced away.

    Example:
        >>> log_mean_exp(torch.tensor([1.0, 3.0]).log())  # log((1 + 3) / 2)
        tensor(0.6931)
    """
    return torch.logsumexp(values, dim=dim) - math.log(values.shape[dim])


def log_predictive_probs(logits: Tensor) -> Tensor:
    """Log of the Monte Carlo predictive, log p̄ = logsumexp_s log_softmax(logits_s) - log S.

    Stays finite where ``log(mean(softmax))`` underflows, so it is the form to use for
    losses and attacks on the predictive (docs/pitfalls.md §1.8).

    Args:
        logits: Per-sample logits, shape (S, B, C).

    Returns:
        Log-probabilities, shape (B, C).

    Raises:
        ValueError: If ``logits`` is not 3-D or has no samples.

    Example:
        >>> logits = torch.tensor([[[0.0, 1000.0]], [[0.0, -1000.0]]])
        >>> log_predictive_probs(logits)  # log of [0.5, 0.5]
        tensor([[-0.6931, -0.6931]])
    """
    if logits.ndim != 3 or logits.shape[0] == 0:
        raise ValueError(
            f"logits must have shape (S, B, C) with S ≥ 1, got {tuple(logits.shape)}"
        )
    return log_mean_exp(torch.log_softmax(logits, dim=-1))  # (S, B, C) -> (B, C)


def predictive_probs(logits: Tensor) -> Tensor:
    """Monte Carlo predictive p̄ = (1/S) Σ_s softmax(logits_s), computed in log space.

    Args:
        logits: Per-sample logits, shape (S, B, C).

    Returns:
        Probabilities, shape (B, C); each row sums to 1.

    Raises:
        ValueError: If ``logits`` is not 3-D or has no samples.

    Example:
        >>> logits = torch.tensor([[[0.0, 0.0]], [[0.0, 1000.0]]])
        >>> predictive_probs(logits)  # mean of [0.5, 0.5] and [0, 1]
        tensor([[0.2500, 0.7500]])
    """
    return log_predictive_probs(logits).exp()


def accuracy(probs_mean: Tensor, y: Tensor) -> Tensor:
    """Fraction of examples whose most probable class is the label.

    Args:
        probs_mean: Predictive probabilities (or any scores), shape (B, C).
        y: Class indices, shape (B,).

    Returns:
        Accuracy in [0, 1], a 0-d tensor.

    Raises:
        ValueError: On shapes that do not match or labels outside [0, C).

    Example:
        >>> probs = torch.tensor([[0.9, 0.1], [0.4, 0.6], [0.3, 0.7], [0.8, 0.2]])
        >>> accuracy(probs, torch.tensor([0, 1, 0, 0]))
        tensor(0.7500)
    """
    _check_predictions(probs_mean, y)
    return (probs_mean.argmax(dim=-1) == y).to(probs_mean.dtype).mean()


def nll(probs_mean: Tensor, y: Tensor) -> Tensor:
    """Mean negative log-likelihood of the labels, -(1/B) Σ_i log p̄_i,y_i (nats).

    Probabilities are clamped at the smallest normal number of their dtype, so a zero
    probability costs about 87 nats in float32 (708 in float64) instead of ``inf``.

    Args:
        probs_mean: Predictive probabilities, shape (B, C).
        y: Class indices, shape (B,).

    Returns:
        Mean NLL ≥ 0, a 0-d tensor.

    Raises:
        ValueError: On shapes that do not match or labels outside [0, C).

    Example:
        >>> probs = torch.tensor([[0.5, 0.5], [0.25, 0.75]])
        >>> nll(probs, torch.tensor([0, 1]))  # -(log 0.5 + log 0.75) / 2
        tensor(0.4904)
    """
    return nll_per_example(probs_mean, y).mean()


def nll_per_example(probs_mean: Tensor, y: Tensor) -> Tensor:
    """Each example's negative log-likelihood, -log p̄_i,y_i, shape (B,); :func:`nll` is
    their mean (the same clamp).

    Raises:
        ValueError: On shapes that do not match or labels outside [0, C).
    """
    _check_predictions(probs_mean, y)
    p_true = probs_mean.gather(-1, y.long().unsqueeze(-1)).squeeze(-1)  # (B,)
    return -p_true.clamp_min(torch.finfo(probs_mean.dtype).tiny).log()


def ece(probs_mean: Tensor, y: Tensor, *, n_bins: int = 15) -> Tensor:
    """Expected calibration error with equal-width confidence bins.

    Confidence is max_c p̄_c; bin b covers (b/n_bins, (b+1)/n_bins] (the first bin also
    takes 0). ECE = Σ_b (n_b / B) |acc_b - conf_b| over non-empty bins (Guo et al. 2017).

    Args:
        probs_mean: Predictive probabilities, shape (B, C).
        y: Class indices, shape (B,).
        n_bins: Number of bins over [0, 1].

    Returns:
        ECE in [0, 1], a 0-d tensor; 0 is perfectly calibrated.

    Raises:
        ValueError: On shapes that do not match, labels outside [0, C) or ``n_bins < 1``.

    References:
        Guo et al., "On Calibration of Modern Neural Networks", ICML 2017,
        https://arxiv.org/abs/1706.04599.

    Example:
        >>> probs = torch.tensor([[0.9, 0.1], [0.9, 0.1], [0.6, 0.4], [0.6, 0.4]])
        >>> ece(probs, torch.tensor([0, 0, 0, 1]), n_bins=10)  # (2·0.1 + 2·0.1) / 4
        tensor(0.1000)
    """
    _check_predictions(probs_mean, y)
    if isinstance(n_bins, bool) or not isinstance(n_bins, int) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    confidence, predicted = probs_mean.max(dim=-1)  # (B,)
    correct = (predicted == y).to(probs_mean.dtype)
    edges = torch.linspace(0, 1, n_bins + 1, dtype=probs_mean.dtype, device=probs_mean.device)
    bins = torch.bucketize(confidence.detach(), edges[1:-1])  # right-closed bins
    # n_b |acc_b - conf_b| = |Σ_b correct - Σ_b confidence|, so empty bins need no division.
    gap = bin_sums(bins, correct - confidence, n_bins)
    return gap.abs().sum() / y.shape[0]


def bin_sums(bins: Tensor, values: Tensor, n_bins: int) -> Tensor:
    """The sum of ``values`` per bin, (n_bins,), in a fixed order on every device.

    ``index_add`` on CUDA adds with atomics in no fixed order, so a rerun could differ in the
    last bits (measured on an H200: a reliability bin's confidence 0.2933023274 vs
    0.2933023572). The per-example vectors are small, so the sums are taken on the CPU, in
    order, and moved back; gradients flow through the moves.
    """
    zeros = torch.zeros(n_bins, dtype=values.dtype)
    return zeros.index_add(0, bins.cpu(), values.cpu()).to(values.device)
