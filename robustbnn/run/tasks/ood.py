"""Task ``ood``: one OOD set scored by every uncertainty measure against the in-distribution
scores (the clean test scores, or the ``indist`` cell's split)."""

from __future__ import annotations

from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context, ood_images
from robustbnn.run.tasks._scoring import no_grad_samples, ranking_rows, uncertainty_scores

__all__ = ["run"]


def run(ctx: Context) -> CellOutcome:
    """Ranking rows of the set (dataset = its name); arrays = its per-example scores."""
    name = ctx.params["set"]
    probs, logits = no_grad_samples(ctx, ood_images(ctx.spec, name), "eval")
    scores_out = uncertainty_scores(probs, ctx.cfg.extra_measures, logits=logits)
    scores_in = ctx.inputs["indist"] if "indist" in ctx.inputs else ctx.inputs["clean"]
    rows = ranking_rows(ctx, scores_in, scores_out, dataset=name)
    return CellOutcome(rows=rows, arrays=scores_out)
