"""The difference-of-logits-ratio (DLR) loss: a margin objective that does not saturate.

References:
    Croce & Hein, "Reliable evaluation of adversarial robustness with an ensemble of diverse
    parameter-free attacks", ICML 2020, arXiv:2003.01690 (the untargeted DLR loss;
    AutoAttack runs APGD on it beside APGD on cross-entropy and keeps, per example, the first
    attack that succeeds).

For one logit vector z (C,) with its entries sorted z_π1 >= z_π2 >= z_π3 >= ...,

    DLR(z, y) = -(z_y - max_{i != y} z_i) / (z_π1 - z_π3 + 1e-12),

positive exactly when the input is misclassified; an attack ascends it. Its numerator is the
Carlini–Wagner margin (Carlini & Wagner 2017, arXiv:1608.04644), and the denominator makes it
invariant to shifting and to rescaling the logits (z -> a z + b, a > 0), which a cross-entropy
is not: a softmax whose top-two logit gap is above ~100 rounds to one-hot in float32 and the
CE's input gradient underflows to exactly zero (docs/pitfalls.md §1.8), while the DLR's gradient
is that of the unsaturated ratio.

**Which logits, for a stochastic model.** The loss of S posterior samples is the mean over
samples of the per-sample DLR, (1/S) sum_s DLR(f_s(x), y), on each sample's own logits (S, B,
C): the expectation over the model's randomness of a loss of one network, as EOT asks (Athalye
et al. 2018, arXiv:1802.00420), and what AutoAttack's ``version="rand"`` estimates by
averaging the gradient over draws. Averaging the logits first would attack a network the model
never samples (the mean-logit network, not the predictive p̄), and the logits of two samples
share no scale or offset (a softmax ignores both), so a mean of logits weighs the samples by
their arbitrary scales; the per-sample ratio is scale-free sample by sample. The log predictive
log p̄ is no way out either: for S = 1 its DLR equals the logit one, and for S > 1 it mixes the
samples before the ratio.

Shapes: logits (S, B, C), y (B,) -> (B,) per example, or a scalar summed over the batch.

Example:
    >>> import torch
    >>> logits = torch.tensor([[[3.0, 1.0, 0.0], [0.0, 4.0, 2.0]]])  # (S=1, B=2, C=3)
    >>> dlr_loss(logits, torch.tensor([0, 0]), reduction="none")
    tensor([-0.6667,  1.0000])
    >>> bool(torch.allclose(dlr_loss(7 * logits + 2, torch.tensor([0, 0]), reduction="none"),
    ...                     dlr_loss(logits, torch.tensor([0, 0]), reduction="none")))
    True
"""

from __future__ import annotations

from torch import Tensor

__all__ = ["DLR_EPS", "dlr_loss"]

DLR_EPS = 1e-12  # Croce & Hein's guard against a zero denominator (all top-three logits equal)


def dlr_loss(logits: Tensor, y: Tensor, *, reduction: str = "sum") -> Tensor:
    """The untargeted DLR loss of labels ``y`` under sampled ``logits``, mean over samples.

    Args:
        logits: Per-sample logits, shape (S, B, C), C >= 3.
        y: Labels, shape (B,).
        reduction: ``"sum"`` (a scalar over the batch, so a gradient does not scale with the
            batch size) or ``"none"`` (one loss per example, shape (B,)).

    Returns:
        (1/S) sum_s DLR(logits[s, b], y[b]), summed over b or shape (B,).

    Raises:
        ValueError: For fewer than three classes (the denominator needs z_π3) or an unknown
            ``reduction``.
    """
    n_samples, _, n_classes = logits.shape
    if n_classes < 3:
        raise ValueError(f"the DLR loss needs at least 3 classes (its denominator is "
                         f"z_π1 - z_π3), got {n_classes}; use the CE or CW objective")
    if reduction not in ("sum", "none"):
        raise ValueError(f"unknown reduction {reduction!r}; known: ['sum', 'none']")
    index = y.expand(n_samples, -1).unsqueeze(-1)  # (S, B, 1)
    true = logits.gather(-1, index).squeeze(-1)  # (S, B)
    others = logits.scatter(-1, index, float("-inf")).amax(-1)  # max_{i != y} z_i, (S, B)
    top = logits.topk(3, dim=-1).values  # (S, B, 3), descending
    per = -(true - others) / (top[..., 0] - top[..., 2] + DLR_EPS)  # (S, B)
    per = per.mean(0)  # (B,)
    return per.sum() if reduction == "sum" else per
