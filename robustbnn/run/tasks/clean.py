"""Task ``clean``: accuracy, NLL, ECE and Brier score of the MC predictive, its reliability
diagram, the cost rows, the clean scores.

Its arrays (every uncertainty measure on every test point) are what the attack and OOD cells
compare against, so the clean predictive is sampled once per model.
"""

from __future__ import annotations

import time

from robustbnn.results import names as N
from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context
from robustbnn.run.tasks._scoring import (
    calibration_rows,
    no_grad_probs,
    no_grad_samples,
    reliability_rows,
    uncertainty_scores,
)

__all__ = ["run"]


def run(ctx: Context) -> CellOutcome:
    """Clean metrics and cost of ``ctx.model`` on the test split."""
    x, y = ctx.data.test.x, ctx.data.test.y
    # One-off work (allocations, kernel selection, lazily built buffers) stays untimed: a
    # warm-up pass over the first 64 points at the timed S (its own stream; results unchanged).
    no_grad_probs(ctx, x[:64], "warmup")
    start = time.perf_counter()
    probs, logits = no_grad_samples(ctx, x, "eval")  # (S, B, C) each
    seconds = (time.perf_counter() - start) * 1000 / len(x)
    mean = probs.mean(0)
    knobs = {N.S_EVAL: ctx.cfg.s_eval}
    rows = calibration_rows(ctx, N.CLEAN, knobs, mean, y)
    rows += reliability_rows(ctx, {N.SHIFT: N.ShiftKind.NONE, **knobs}, mean, y)
    parameters = sum(p.numel() for p in ctx.model.parameters())
    rows += [ctx.result(N.COST, knobs, "", N.SECONDS_PER_1000_PREDICTIONS, seconds),
             ctx.result(N.COST, knobs, "", N.PARAMETERS, parameters)]
    return CellOutcome(rows=rows, arrays=uncertainty_scores(probs, ctx.cfg.extra_measures,
                                                                logits=logits))
