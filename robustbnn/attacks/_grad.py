"""The one Monte Carlo input gradient every attack uses.

Two objectives differ for stochastic models (PITFALLS.md §1.2), so both are named:

* ``"predictive"``: CE of the posterior predictive, -log (1/S) sum_s softmax(f_s(x))_y, computed
  with logsumexp. This is what the BHN (``FGS_eval.fgm_grad2``) and Li & Gal
  (``loading_utils.MC_dropout``) codes differentiate.
* ``"expected"``: (1/S) sum_s CE(f_s(x), y), the EOT gradient of torchattacks/AutoAttack.

Losses are summed over the batch so a gradient does not scale with the batch size. Nothing
here calls ``eval()`` or ``train()``: randomness comes only from ``sample_logits``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

from robustbnn.types import check_sample_logits

OBJECTIVES = ("predictive", "expected")


def mc_loss(logits: Tensor, y: Tensor, objective: str) -> Tensor:
    """Summed cross-entropy of labels ``y`` (B,) under sampled ``logits`` (S, B, C)."""
    n_samples = logits.shape[0]
    if objective == "predictive":
        logp = torch.logsumexp(F.log_softmax(logits, dim=-1), dim=0) - math.log(n_samples)
        return F.nll_loss(logp, y, reduction="sum")
    if objective == "expected":
        flat = logits.reshape(-1, logits.shape[-1])  # (S*B, C)
        return F.cross_entropy(flat, y.repeat(n_samples), reduction="sum") / n_samples
    raise ValueError(f"unknown attack objective {objective!r}; known: {list(OBJECTIVES)}")


def mc_input_grad(
    model: torch.nn.Module,
    x: Tensor,
    y: Tensor,
    *,
    n_samples: int,
    objective: str = "predictive",
    generator: torch.Generator | None = None,
    name: str = "model",
) -> Tensor:
    """Gradient of the MC cross-entropy of ``y`` with respect to the input.

    Args:
        model: A registry model.
        x: Inputs in [0, 1], shape (B, *).
        y: Labels whose loss to differentiate, shape (B,) (true, predicted or target).
        n_samples: S_attack, the posterior samples in the estimate.
        objective: ``"predictive"`` or ``"expected"`` (see module docstring).
        generator: Source of the attack's posterior samples.
        name: Model name for contract errors.

    Returns:
        d loss / d x, shape (B, *).
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown attack objective {objective!r}; known: {list(OBJECTIVES)}")
    x = x.detach().requires_grad_(True)
    with torch.enable_grad():
        logits = model.sample_logits(x, n_samples, generator=generator)  # (S, B, C)
        check_sample_logits(logits, n_samples, x, model.num_classes, name)
        (grad,) = torch.autograd.grad(mc_loss(logits, y, objective), x)
    return grad
