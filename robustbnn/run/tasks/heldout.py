"""Task ``heldout``: a model trained without class k scores class k as OOD (BHN Table 3)."""

from __future__ import annotations

from robustbnn.data.heldout import heldout_name
from robustbnn.metrics.classification import accuracy
from robustbnn.results import names as N
from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context, heldout_images
from robustbnn.run.tasks._scoring import no_grad_samples, ranking_rows, uncertainty_scores

__all__ = ["run"]


def run(ctx: Context) -> CellOutcome:
    """``heldout_clean`` accuracy on the reduced test set and ``ood`` rows for class k.

    The in-distribution scores come from the reduced ``ood_in_split`` split (test, or the
    validation split as the BHN code). Arrays: ``in/<measure>`` and ``out/<measure>``.
    """
    k = ctx.params["k"]
    ood = heldout_name(k)
    extra = ctx.cfg.extra_measures
    probs, logits = no_grad_samples(ctx, ctx.data.test.x, "eval", "in")
    rows = [ctx.result(N.HELDOUT_CLEAN, {N.S_EVAL: ctx.cfg.s_eval}, "", N.ACCURACY,
                       accuracy(probs.mean(0), ctx.data.test.y), dataset=ood)]
    if ctx.cfg.ood_in_split != "test":
        split = getattr(ctx.data, ctx.cfg.ood_in_split)
        probs, logits = no_grad_samples(ctx, split.x, "eval", "in", ctx.cfg.ood_in_split)
    scores_in = uncertainty_scores(probs, extra, logits=logits)
    probs, logits = no_grad_samples(ctx, heldout_images(ctx.spec, k), "eval", "out")
    scores_out = uncertainty_scores(probs, extra, logits=logits)
    rows += ranking_rows(ctx, scores_in, scores_out, dataset=ood)
    arrays = {f"in/{m}": v for m, v in scores_in.items()}
    arrays |= {f"out/{m}": v for m, v in scores_out.items()}
    return CellOutcome(rows=rows, arrays=arrays)
