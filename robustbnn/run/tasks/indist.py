"""Task ``indist``: every uncertainty measure on an in-distribution split other than test.

BHN's anomaly-detection code scored the MNIST validation split as in-distribution
(docs/protocols.md §1.5); with ``ood_in_split="val"`` the OOD cells rank against these scores.
"""

from __future__ import annotations

from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context
from robustbnn.run.tasks._scoring import no_grad_samples, uncertainty_scores

__all__ = ["run"]


def run(ctx: Context) -> CellOutcome:
    """No rows; arrays = the split's per-example scores, one array per measure."""
    split = getattr(ctx.data, ctx.params["split"])
    probs, logits = no_grad_samples(ctx, split.x, "eval")
    return CellOutcome(rows=[], arrays=uncertainty_scores(probs, ctx.cfg.extra_measures,
                                                          logits=logits))
