"""Task ``shift``: calibration under dataset shift, one cell per model and kind of shift.

For every level of its kind (an angle of ``rotated``, a corruption of ``corrupted``) the cell
scores the first ``n`` test points, shifted, with S_eval fresh posterior samples: accuracy,
NLL, ECE and Brier score of the predictive, and the mean of every uncertainty measure. A
``corrupted`` cell also writes the reliability diagram of its fifteen sets pooled (task
``reliability``, ``shift`` = ``corrupted``), beside the clean one the ``clean`` cell writes.

References:
    Ovadia et al., "Can You Trust Your Model's Uncertainty? Evaluating Predictive Uncertainty
    Under Dataset Shift", NeurIPS 2019, https://arxiv.org/abs/1906.02530 (rotated MNIST).
    Mu & Gilmer, "MNIST-C: A Robustness Benchmark for Computer Vision", 2019,
    https://arxiv.org/abs/1906.02337.
"""

from __future__ import annotations

import torch

from robustbnn.data.shift.sets import LEVEL_KNOB
from robustbnn.results import names as N
from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context, shift_images
from robustbnn.run.tasks._scoring import (
    calibration_rows,
    no_grad_probs,
    reliability_rows,
    uncertainty_scores,
)

__all__ = ["run"]


def run(ctx: Context) -> CellOutcome:
    """Rows of task ``shift`` per level (and the pooled reliability diagram of MNIST-C)."""
    kind, n = ctx.params[N.SHIFT], ctx.params[N.N]
    _, y = ctx.test_head(n)
    base = {N.S_EVAL: ctx.params[N.S_EVAL], N.N: len(y)}
    rows: list[dict] = []
    means = []
    for level in ctx.params["levels"]:
        x = shift_images(ctx.spec, kind, level, len(y), ctx.params["seed"])
        probs = no_grad_probs(ctx, x, "eval", str(level))  # (S, B, C)
        knobs = {N.SHIFT: kind, LEVEL_KNOB[kind]: level, **base}
        mean = probs.mean(0)
        rows += calibration_rows(ctx, N.SHIFT, knobs, mean, y)
        for measure, score in uncertainty_scores(probs, tuple(ctx.params["measures"])).items():
            rows.append(ctx.result(N.SHIFT, knobs, measure, N.MEAN_UNCERTAINTY,
                                   float(score.mean())))
        means.append(mean)
    if kind == N.ShiftKind.CORRUPTED and means:
        pooled = torch.cat(means)  # (levels * B, C)
        rows += reliability_rows(ctx, {N.SHIFT: kind, **base}, pooled, y.repeat(len(means)))
    return CellOutcome(rows=rows)
