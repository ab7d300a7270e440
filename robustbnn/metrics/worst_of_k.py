"""Worst-of-k evaluation: each (adversarial) input judged k times with fresh posterior samples.

A stochastic model's prediction on one input is a random variable. Reporting the accuracy of a
single evaluation picks one draw of it, and the draw that happened to be right inflates the
robustness of randomized defences (docs/pitfalls.md §1.1; RobustBench PRs #104/#105). Here every
input is evaluated ``k`` times, each time with ``S_eval`` fresh samples (predictive = argmax of
the mean of the ``S_eval`` softmaxes), and three numbers summarise the ``k x B`` predictions:

==========================  ===================================================================
``expected_accuracy``       mean over the k evaluations of the accuracy (the usual number, with
                            k times the evaluation samples)
``all_k_accuracy``          fraction of inputs classified correctly in **all** k evaluations:
                            what an attacker who may query k times and keep any success beats
``flip_probability``        mean over inputs of the probability that two independent evaluations
                            predict different classes, 1 - Σ_c n_c (n_c - 1) / (k (k - 1)) with
                            n_c the evaluations predicting c (unbiased; 0 when deterministic)
==========================  ===================================================================

``all_k_accuracy <= expected_accuracy`` always, with equality exactly when no input is right in
some evaluations and wrong in others (a deterministic model).
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from robustbnn.contract.checked import checked
from robustbnn.contract.predict import Evaluation

__all__ = ["WorstOfK", "k_predictions", "summarise", "worst_of_k"]


class WorstOfK(NamedTuple):
    """The worst-of-k summary of one set of inputs (see the module docstring)."""

    expected_accuracy: float
    all_k_accuracy: float
    flip_probability: float


def k_predictions(model: torch.nn.Module, x: Tensor, evaluation: Evaluation, *,
                  k: int) -> Tensor:
    """Predicted classes of ``k`` independent evaluations of ``x``, shape (k, B), no grad.

    Each evaluation draws ``evaluation.s_eval`` fresh samples from ``evaluation.generator``
    and predicts the argmax of their mean softmax.
    """
    if k < 1:
        raise ValueError(f"need k >= 1, got k={k}")
    model = checked(model)
    with torch.no_grad():
        return torch.stack([evaluation.probs(model, x).mean(0).argmax(-1) for _ in range(k)])


def summarise(preds: Tensor, y: Tensor) -> WorstOfK:
    """The worst-of-k numbers of predictions ``preds`` (k, B) of labels ``y`` (B,)."""
    k = preds.shape[0]
    correct = preds == y  # (k, B)
    expected = float(correct.double().mean())
    all_k = float(correct.all(0).double().mean())
    if k < 2:
        return WorstOfK(expected, all_k, float("nan"))
    counts = torch.zeros(preds.shape[1], int(preds.max()) + 1, dtype=torch.float64,
                         device=preds.device)
    counts.scatter_add_(1, preds.T, torch.ones_like(preds.T, dtype=torch.float64))  # (B, C)
    agree = (counts * (counts - 1)).sum(1) / (k * (k - 1))  # P(two evaluations agree), (B,)
    return WorstOfK(expected, all_k, float((1 - agree).mean()))


def worst_of_k(model: torch.nn.Module, x: Tensor, y: Tensor, evaluation: Evaluation, *,
               k: int) -> WorstOfK:
    """Evaluate ``x`` k times with fresh samples each (``evaluation``); summarise against ``y``.

    Example:
        >>> import torch
        >>> from robustbnn.models import MODELS
        >>> spec = MODELS.get("mlp")
        >>> net = spec.build(spec.config(), (1, 28, 28), 10, torch.Generator().manual_seed(0))
        >>> x, y = torch.rand(5, 1, 28, 28), torch.arange(5)
        >>> r = worst_of_k(net, x, y, Evaluation(2, torch.Generator().manual_seed(1)), k=3)
        >>> r.all_k_accuracy == r.expected_accuracy, r.flip_probability
        (True, 0.0)
    """
    return summarise(k_predictions(model, x, evaluation, k=k), y)
