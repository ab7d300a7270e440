"""Logit-based uncertainty measures: free energy and maximum logit, on logits (S, B, C).

Both scores come from single-model OOD detection, where they beat the maximum softmax
probability because they are not normalised away by the softmax: the energy
E(f) = -logsumexp_c f_c (temperature 1) is, up to a constant, the negative log of the
unnormalised input density of a classifier read as an energy-based model, and the maximum
logit max_c f_c is its sharpest term. Both are turned around so that **higher means more
OOD**: ``energy`` is E itself, ``max_logit`` is -max_c f_c.

With S posterior samples of logits f_s (natural log) there are two ways to score:

=====================  ===============================================================
``energy``             E(g) = -logsumexp_c g_c, g_c = log (1/S) Σ_s exp f_s,c
``max_logit``          -max_c g_c
``mean_energy``        (1/S) Σ_s E(f_s)
``mean_max_logit``     -(1/S) Σ_s max_c f_s,c
=====================  ===============================================================

Why g, the log-mean-exp of the logits, for "the predictive": exp f_s,c is sample s's
unnormalised density of (x, c), so exp g_c is the posterior average of those densities, the
Bayesian model average in the energy view, just as p̄ averages probabilities rather than
logits; and -logsumexp_c g_c = -log (1/S) Σ_s exp(-E(f_s)), the free energy of the averaged
density. Averaging logits instead (E(mean_s f_s)) would let two samples with opposite
confident logits cancel into a "low-density" score. By Jensen, ``energy`` ≤ ``mean_energy``
(no such order holds for the max-logit pair: samples may peak at different classes); each
pair coincides for identical samples (a deterministic model) and for S = 1.

References:
    Liu, Wang, Owens & Li, "Energy-based Out-of-distribution Detection", NeurIPS 2020,
    https://arxiv.org/abs/2010.03759.
    Hendrycks et al., "Scaling Out-of-Distribution Detection for Real-World Settings",
    ICML 2022, https://arxiv.org/abs/1911.11132 (MaxLogit).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["check_samples", "energy", "max_logit", "mean_energy", "mean_max_logit",
           "predictive_logits"]


def check_samples(values: Tensor, name: str = "logits") -> None:
    """Raise unless ``values`` is a 3-D (S, B, C) tensor with S, C ≥ 1.

    The one input check of the measures (``name`` is ``"logits"`` or ``"probs"``).

    Raises:
        TypeError: If ``values`` is not a tensor.
        ValueError: If its shape is not (S, B, C) with S, C ≥ 1, showing the shape.
    """
    if not isinstance(values, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape (S, B, C), got {type(values)}")
    if values.ndim != 3:
        raise ValueError(f"{name} must have shape (S, B, C), got shape {tuple(values.shape)}")
    if values.shape[0] == 0 or values.shape[2] == 0:
        raise ValueError(
            f"{name} needs at least one sample and one class, got shape {tuple(values.shape)}"
        )


def predictive_logits(logits: Tensor) -> Tensor:
    """The log-mean-exp over samples, g_c = log (1/S) Σ_s exp f_s,c, shape (B, C).

    Example:
        >>> predictive_logits(torch.tensor([[[0.0, 2.0]], [[0.0, 2.0]]]))  # samples agree
        tensor([[0., 2.]])
    """
    check_samples(logits)
    return torch.logsumexp(logits, dim=0) - math.log(logits.shape[0])


def energy(logits: Tensor) -> Tensor:
    """Free energy of the predictive, -logsumexp_c g_c with g = :func:`predictive_logits`.

    Args:
        logits: Per-sample logits, shape (S, B, C).

    Returns:
        Scores, shape (B,); higher means more uncertain (lower input density).

    Example:
        >>> logits = torch.tensor([[[0.0, 0.0]], [[0.0, 0.0]]])  # S=2, B=1, C=2
        >>> energy(logits)  # -log 2
        tensor([-0.6931])
    """
    return -torch.logsumexp(predictive_logits(logits), dim=-1)


def mean_energy(logits: Tensor) -> Tensor:
    """Energy averaged over samples, (1/S) Σ_s -logsumexp_c f_s,c.

    Args:
        logits: Per-sample logits, shape (S, B, C).

    Returns:
        Scores, shape (B,); higher means more uncertain.

    Example:
        >>> logits = torch.tensor([[[0.0, 0.0]], [[2.0, 2.0]]])
        >>> mean_energy(logits)  # -(log 2 + (2 + log 2)) / 2
        tensor([-1.6931])
    """
    check_samples(logits)
    return -torch.logsumexp(logits, dim=-1).mean(dim=0)


def max_logit(logits: Tensor) -> Tensor:
    """Negated largest predictive logit, -max_c g_c with g = :func:`predictive_logits`.

    Args:
        logits: Per-sample logits, shape (S, B, C).

    Returns:
        Scores, shape (B,); higher means more uncertain.

    Example:
        >>> logits = torch.tensor([[[1.0, 3.0]], [[1.0, 3.0]]])
        >>> max_logit(logits)
        tensor([-3.])
    """
    return -predictive_logits(logits).amax(dim=-1)


def mean_max_logit(logits: Tensor) -> Tensor:
    """Negated largest logit averaged over samples, -(1/S) Σ_s max_c f_s,c.

    Args:
        logits: Per-sample logits, shape (S, B, C).

    Returns:
        Scores, shape (B,); higher means more uncertain.

    Example:
        >>> logits = torch.tensor([[[1.0, 3.0]], [[4.0, 0.0]]])
        >>> mean_max_logit(logits)  # -(3 + 4) / 2
        tensor([-3.5000])
    """
    check_samples(logits)
    return -logits.amax(dim=-1).mean(dim=0)
