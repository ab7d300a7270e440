"""Task ``targeted``: the targeted iterative attack's curve (Li & Gal 2017, Fig. 7)."""

from __future__ import annotations

from robustbnn.attacks import TargetedIFGSM, exclude_target, targeted_curve
from robustbnn.contract.predict import Evaluation
from robustbnn.ood import UNCERTAINTIES
from robustbnn.results import names as N
from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context

__all__ = ["run"]


def run(ctx: Context) -> CellOutcome:
    """Per checkpoint: accuracy, target success, distortion and every mean uncertainty.

    The examples of the target class are dropped first.
    """
    p = ctx.params
    attack = TargetedIFGSM(step_size=p[N.STEP_SIZE], steps=p[N.STEPS], n_samples=p[N.S_ATTACK],
                           objective=p[N.OBJECTIVE], target_class=p[N.TARGET],
                           checkpoint_every=p["every"])
    x, y = exclude_target(*ctx.test_head(p[N.N]), attack.target_class)
    evaluation = Evaluation(ctx.cfg.s_eval, ctx.gen("eval"), ctx.params["memory_mb"])
    parts: dict = {}
    curve = targeted_curve(ctx.model, x, y, attack, evaluation, generator=ctx.gen("attack"),
                           per_example=parts)
    rows = []
    for point in curve:
        knobs = {N.STEP: int(point["step"]), N.STEP_SIZE: attack.step_size,
                 N.TARGET: attack.target_class, N.S_ATTACK: attack.n_samples,
                 N.S_EVAL: ctx.cfg.s_eval, N.OBJECTIVE: attack.objective, N.N: int(point["n"])}
        for key, value in point.items():
            if key in ("step", "n"):
                continue
            measure, metric = (key, N.MEAN_UNCERTAINTY) if key in UNCERTAINTIES else ("", key)
            examples = ({k: v.numpy() for k, v in parts[int(point["step"])].items()}
                        if metric in (N.ACCURACY, N.TARGET_SUCCESS) else None)
            rows.append(ctx.result(N.TARGETED, knobs, measure, metric, value,
                                   examples=examples))
    return CellOutcome(rows=rows)
