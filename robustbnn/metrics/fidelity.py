"""Posterior fidelity: how closely a model's predictive matches a reference predictive (HMC).

Both predictives are probabilities of shape (B, C), rows summing to 1: the model's Monte Carlo
predictive p̄ = (1/S) Σ_s p_s (:func:`mc_predictive` from samples-first probabilities
(S, B, C)) and the reference's q. Following the NeurIPS 2021 approximate-inference
competition's scores against HMC (Wilson et al. 2022; Izmailov et al. 2021):

* :func:`agreement`: the fraction of inputs whose top-1 class under p̄ is the reference's
  (ties go to the lowest class index, ``argmax``'s first maximum); higher is better;
* :func:`total_variation`: the mean over inputs of ½ Σ_c |p̄_c − q_c|, in [0, 1]; lower is
  better;
* :func:`kl_from_reference`: the mean over inputs of KL(q ‖ p̄) = Σ_c q_c (log q_c − log p̄_c),
  in nats; lower is better. Classes with q_c = 0 add 0 (0 · log 0 = 0, exactly); p̄_c is
  clamped below at ``floor`` (default 1e-12) so a class the reference gives mass and the
  model none adds q_c · (log q_c + 27.6) instead of infinity.

Every function returns a 0-d tensor on the inputs' device (``.item()`` for a float).

References:
    Izmailov, Vikram, Hoffman & Wilson, "What Are Bayesian Neural Network Posteriors Really
    Like?", ICML 2021, arXiv:2104.14421 (agreement and total variation to HMC).
    Wilson, Izmailov, Hoffman, Gal, Li, Pradier, Vikram, Foong, Lotfi & Farquhar,
    "Evaluating Approximate Inference in Bayesian Deep Learning", PMLR 176 (NeurIPS 2021
    competition), 2022.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["agreement", "kl_from_reference", "mc_predictive", "total_variation"]

SUM_TOLERANCE = 1e-3  # |Σ_c p_c − 1| allowed per row: float32 means of softmaxes stay far inside


def _check_probs(probs: Tensor, name: str, ndim: int) -> None:
    """Raise ValueError unless ``probs`` has ``ndim`` dims, no empty axis, and holds finite,
    non-negative rows summing to 1 along the last axis."""
    axes = "(S, B, C)" if ndim == 3 else "(B, C)"
    if probs.ndim != ndim or 0 in probs.shape:
        raise ValueError(f"{name} must be probabilities of shape {axes} with no empty axis, got "
                         f"shape {tuple(probs.shape)}")
    if not probs.dtype.is_floating_point:
        raise ValueError(f"{name} must be floating point probabilities, got dtype {probs.dtype}")
    if not torch.isfinite(probs).all() or (probs < 0).any():
        raise ValueError(f"{name} must be finite and non-negative; pass probabilities "
                         "(softmax of the logits), not logits")
    worst = (probs.sum(-1) - 1).abs().max().item()
    if worst > SUM_TOLERANCE:
        raise ValueError(f"{name} rows must sum to 1 over the classes, found a sum off by "
                         f"{worst:.3g}; pass probabilities (softmax of the logits), not logits")


def _check_pair(probs: Tensor, reference: Tensor) -> None:
    _check_probs(probs, "probs", 2)
    _check_probs(reference, "reference", 2)
    if probs.shape != reference.shape:
        raise ValueError(f"probs and reference must have the same shape (B, C), got "
                         f"{tuple(probs.shape)} and {tuple(reference.shape)}")


def mc_predictive(probs: Tensor) -> Tensor:
    """The Monte Carlo predictive: samples-first probabilities averaged over the samples.

    Args:
        probs: Per-sample probabilities, shape (S, B, C).

    Returns:
        p̄, shape (B, C).

    Raises:
        ValueError: Unless ``probs`` is (S, B, C) with finite, non-negative rows summing to 1.

    Example:
        >>> mc_predictive(torch.tensor([[[1.0, 0.0]], [[0.5, 0.5]]]))
        tensor([[0.7500, 0.2500]])
    """
    _check_probs(probs, "probs", 3)
    return probs.mean(0)


def agreement(probs: Tensor, reference: Tensor) -> Tensor:
    """The fraction of inputs whose top-1 class under ``probs`` is the reference's top-1 class.

    Args:
        probs: The model's predictive p̄, shape (B, C).
        reference: The reference predictive q, shape (B, C).

    Returns:
        A 0-d tensor in [0, 1]; higher is better.

    Raises:
        ValueError: For shapes other than two equal (B, C), or rows that are not probabilities.

    Example:
        >>> q = torch.tensor([[0.9, 0.1], [0.2, 0.8]])
        >>> agreement(torch.tensor([[0.6, 0.4], [0.7, 0.3]]), q)
        tensor(0.5000)
    """
    _check_pair(probs, reference)
    return (probs.argmax(-1) == reference.argmax(-1)).to(probs.dtype).mean()


def total_variation(probs: Tensor, reference: Tensor) -> Tensor:
    """The mean over inputs of the total variation distance ½ Σ_c |p̄_c − q_c|.

    Args:
        probs: The model's predictive p̄, shape (B, C).
        reference: The reference predictive q, shape (B, C).

    Returns:
        A 0-d tensor in [0, 1]; lower is better.

    Raises:
        ValueError: For shapes other than two equal (B, C), or rows that are not probabilities.

    Example:
        >>> total_variation(torch.tensor([[0.6, 0.4]]), torch.tensor([[0.9, 0.1]]))
        tensor(0.3000)
    """
    _check_pair(probs, reference)
    return 0.5 * (probs - reference).abs().sum(-1).mean()


def kl_from_reference(probs: Tensor, reference: Tensor, *, floor: float = 1e-12) -> Tensor:
    """The mean over inputs of KL(q ‖ p̄) = Σ_c q_c (log q_c − log max(p̄_c, floor)), in nats.

    Terms with q_c = 0 are 0 exactly; ``floor`` bounds the term of a class the model gives
    no mass (module docstring).

    Args:
        probs: The model's predictive p̄, shape (B, C).
        reference: The reference predictive q, shape (B, C).
        floor: The clamp of p̄_c below, > 0.

    Returns:
        A non-negative 0-d tensor; lower is better.

    Raises:
        ValueError: For shapes other than two equal (B, C), rows that are not probabilities,
            or ``floor`` ≤ 0.

    Example:
        >>> q = torch.tensor([[0.5, 0.5, 0.0]])
        >>> kl_from_reference(torch.tensor([[0.25, 0.5, 0.25]]), q)  # ½ log 2
        tensor(0.3466)
    """
    _check_pair(probs, reference)
    if not floor > 0:
        raise ValueError(f"floor must be > 0, got {floor}")
    pos = reference > 0
    q = torch.where(pos, reference, 1.0)  # log 1 = 0 where q = 0; the term is masked anyway
    terms = reference * (q.log() - probs.clamp_min(floor).log())
    return torch.where(pos, terms, 0.0).sum(-1).mean()
