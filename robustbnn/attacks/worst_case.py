"""The worst case per example over several adversarial inputs, as AutoAttack's ensemble keeps.

References:
    Croce & Hein, "Reliable evaluation of adversarial robustness with an ensemble of diverse
    parameter-free attacks", ICML 2020, arXiv:2003.01690 (the ensemble: an example counts as
    robust only when every attack fails on it, so each example keeps the attack that beat the
    model).

One attack objective can fail where another succeeds: PGD on a cross-entropy whose softmax
saturates has no gradient, where a margin loss (:mod:`robustbnn.attacks.margin`) still has one
(docs/pitfalls.md §1.8). Given the inputs of several attacks on the same examples,
:func:`worst_case` keeps per example the one that is worse for the model, judged **under the
attack's own posterior samples** (never the evaluation's draws, which would let the selection
see the test): first an input the predictive p̄ misclassifies, then the lower log p̄(y). Every
candidate is scored on the same draws (the generator's state is replayed), so the choice
compares inputs, not Monte Carlo noise; ties keep the earlier candidate.

Shapes: candidates k x (B, *), y (B,) -> x_adv (B, *), choice (B,).

Example:
    >>> import torch
    >>> from robustbnn.models import MODELS
    >>> spec = MODELS.get("mlp")
    >>> model = spec.build(spec.config(hidden=(16,)), (1, 28, 28), 10,
    ...                    torch.Generator().manual_seed(0))
    >>> x, y = torch.rand(3, 1, 28, 28), torch.tensor([0, 1, 2])
    >>> x_adv, choice = worst_case(model, [x, x.flip(-1)], y, n_samples=1)
    >>> x_adv.shape, choice.shape
    (torch.Size([3, 1, 28, 28]), torch.Size([3]))
    >>> worst_case(model, [x, x], y, n_samples=1)[1].tolist()  # ties keep the earlier
    [0, 0, 0]
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from robustbnn.contract.checked import checked
from robustbnn.metrics.classification import log_predictive_probs

__all__ = ["worst_case"]


def worst_case(model: torch.nn.Module, candidates: Sequence[Tensor], y: Tensor, *,
               n_samples: int, generator: torch.Generator | None = None,
               ) -> tuple[Tensor, Tensor]:
    """Per example, the candidate input that is worst for the model.

    Args:
        model: A registry model (``sample_logits`` contract), checked at the call.
        candidates: Adversarial inputs of the same examples, each shaped (B, *); at least one.
        y: True labels, shape (B,).
        n_samples: S, the attack's posterior samples that score every candidate (its
            ``attack_logits``).
        generator: Source of those samples; its state is replayed for every candidate, so all
            are scored on the same draws, and left after one draw. None = the global RNG
            (candidates then get different draws).

    Returns:
        ``(x_adv, choice)``: per example the candidate p̄ misclassifies, else the one with the
        lowest log p̄(y) (ties keep the earlier), shape (B, *); and the index of the candidate
        kept, shape (B,).

    Raises:
        ValueError: For no candidates, or candidates not shaped alike.
    """
    if not candidates:
        raise ValueError("worst_case needs at least one candidate input")
    shapes = {tuple(c.shape) for c in candidates}
    if len(shapes) != 1:
        raise ValueError(f"worst_case needs candidates of one shape, got {sorted(shapes)}")
    model = checked(model)
    state = generator.get_state() if generator is not None else None
    best = choice = best_wrong = best_true = None
    for i, x_adv in enumerate(candidates):
        if generator is not None:
            generator.set_state(state)
        with torch.no_grad():
            log_p = log_predictive_probs(model.attack_logits(x_adv, n_samples,
                                                             generator=generator))  # (B, C)
        wrong = log_p.argmax(-1) != y  # (B,)
        true = log_p.gather(-1, y.unsqueeze(-1)).squeeze(-1)  # log p̄(y), (B,)
        if best is None:
            best, best_wrong, best_true = x_adv.detach(), wrong, true
            choice = torch.zeros_like(y, dtype=torch.long)
            continue
        better = (wrong & ~best_wrong) | ((wrong == best_wrong) & (true < best_true))  # (B,)
        best = torch.where(better.view(-1, *[1] * (x_adv.ndim - 1)), x_adv.detach(), best)
        best_wrong, best_true = best_wrong | wrong, torch.where(better, true, best_true)
        choice = torch.where(better, torch.full_like(choice, i), choice)
    return best, choice
