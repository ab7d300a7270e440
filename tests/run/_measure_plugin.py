"""A plug-in uncertainty measure for the bench tests (``--plugin tests.run._measure_plugin``)."""

from __future__ import annotations

from torch import Tensor

from robustbnn.ood import UNCERTAINTIES, Measure


def logit_spread(probs: Tensor, logits: Tensor) -> Tensor:
    """Minus the mean over samples of the gap between the two largest logits (B,)."""
    top = logits.topk(2, dim=-1).values  # (S, B, 2)
    return -(top[..., 0] - top[..., 1]).mean(dim=0) + 0 * probs.sum(dim=(0, -1))


UNCERTAINTIES.register("logit_spread", Measure(logit_spread, takes=("probs", "logits"),
                                               version=1))
