"""Task ``detector_aware``: detection-aware robust accuracy, non-adaptive vs adaptive PGD-EOT.

Each detector (one uncertainty measure) flags an input whose score exceeds the threshold that
flags ``fpr`` of the clean test points (the ``clean`` cell's scores). On the first ``n`` test
points, the non-adaptive attack is PGD-EOT (mean_s CE, true labels) and the adaptive one is
:class:`robustbnn.attacks.adaptive.DetectorAwarePGD` against that measure, with the same eps,
steps, step size and S_attack. All adversarial inputs are evaluated on the same ``eval`` draws.
Rows (``detector_aware``, measure = the detector): ``detection_aware_accuracy`` (correct or
flagged) and ``accuracy``, knob ``adaptive`` False (PGD-EOT alone) or True (the per-example
worst case of both attacks: an attacker who knows the detector may use either, as AutoAttack
counts an example robust only when every attack of its ensemble fails).
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from robustbnn.attacks.adaptive import DetectorAwarePGD
from robustbnn.attacks.budget import check_budget
from robustbnn.attacks.pgd import PGD
from robustbnn.metrics.detection import detection_aware_accuracy, threshold_at_fpr
from robustbnn.results import names as N
from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context
from robustbnn.run.tasks._scoring import in_attack_batches, no_grad_probs, uncertainty_scores

__all__ = ["run"]

def run(ctx: Context) -> CellOutcome:
    """Both attacks at the cell's eps; one row pair per (detector, adaptive)."""
    p = ctx.params
    x, y = ctx.test_head(p[N.N])
    s, steps, step_size, eps = p[N.S_ATTACK], p[N.STEPS], p[N.STEP_SIZE], p[N.EPS]
    clean = ctx.inputs["clean"]
    base = {N.EPS: eps, N.S_ATTACK: s, N.STEPS: steps, N.STEP_SIZE: step_size,
            N.S_EVAL: ctx.cfg.s_eval, N.FPR: p[N.FPR], N.N: int(x.shape[0])}

    def attacked(attack: object, stream: str) -> torch.Tensor:
        x_adv = torch.cat(in_attack_batches(ctx, s, functools.partial(
            attack, ctx.model, generator=ctx.gen("attack", stream)), x, y,
            attack=type(attack).__name__)).detach()
        check_budget(x, x_adv, eps, "linf", attack=type(attack).__name__)
        return x_adv

    def evaluate(x_adv: torch.Tensor) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        probs = no_grad_probs(ctx, x_adv, "eval")
        correct = (probs.mean(0).argmax(-1) == y).cpu().numpy()
        return correct, uncertainty_scores(probs)

    plain = PGD(eps=eps, step_size=step_size, steps=steps, n_samples=s, objective="expected",
                label="true")
    correct, scores = evaluate(attacked(plain, "pgd"))
    rows = []
    for measure in p["measures"]:
        threshold = threshold_at_fpr(clean[measure], p[N.FPR])
        knobs = base | {N.ADAPTIVE: False}
        caught = correct | (scores[measure] > threshold)
        rows += [ctx.result(N.DETECTOR_AWARE, knobs, measure, N.DETECTION_AWARE_ACCURACY,
                            detection_aware_accuracy(correct, scores[measure], threshold),
                            examples={N.DETECTION_AWARE_ACCURACY: caught,
                                      N.ACCURACY: correct}),
                 ctx.result(N.DETECTOR_AWARE, knobs, measure, N.ACCURACY, correct.mean(),
                            examples={N.DETECTION_AWARE_ACCURACY: caught,
                                      N.ACCURACY: correct})]
        adaptive = DetectorAwarePGD(eps=eps, step_size=step_size, steps=steps, n_samples=s,
                                    measure=measure)
        a_correct, a_scores = evaluate(attacked(adaptive, measure))
        # An attacker who knows the detector may use either attack: per example, the input is
        # defended only when both are caught (correct or flagged).
        defended = ((correct | (scores[measure] > threshold))
                    & (a_correct | (a_scores[measure] > threshold)))
        knobs = base | {N.ADAPTIVE: True}
        parts = {N.DETECTION_AWARE_ACCURACY: defended, N.ACCURACY: correct & a_correct}
        rows += [ctx.result(N.DETECTOR_AWARE, knobs, measure, N.DETECTION_AWARE_ACCURACY,
                            float(defended.mean()), examples=parts),
                 ctx.result(N.DETECTOR_AWARE, knobs, measure, N.ACCURACY,
                            float((correct & a_correct).mean()), examples=parts)]
    return CellOutcome(rows=rows)
