"""Task ``adv_ood``: worst-case OOD detection, one OOD set against each uncertainty measure.

The first ``n`` images of the set are moved within each eps to lower measure u
(:class:`~robustbnn.attacks.adversarial_ood.LowerUncertainty`, PGD-EOT with S_attack samples per
step), then scored by u with ``S_eval`` fresh samples (the same ``eval`` draws for every eps). Rows
(``adv_ood``, dataset = the set, measure = u): ``auroc`` of the in-distribution scores (the
``clean`` or ``indist`` cell's) against the set's, at eps = 0 (the same images unperturbed)
and at every eps of the grid. A measure constant on both sets (BALD of a deterministic model)
ranks nothing and gets no rows.
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from robustbnn.attacks.adversarial_ood import LowerUncertainty
from robustbnn.attacks.budget import check_budget
from robustbnn.metrics import auroc
from robustbnn.results import names as N
from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context, ood_images
from robustbnn.run.tasks._scoring import in_attack_batches, no_grad_probs, uncertainty_scores

__all__ = ["run"]


def run(ctx: Context) -> CellOutcome:
    """AUROC per (measure, eps), eps = 0 included."""
    p = ctx.params
    name = p["set"]
    x = ood_images(ctx.spec, name)
    x = x[: p[N.N]] if p[N.N] > 0 else x
    s, steps = p[N.S_ATTACK], p[N.STEPS]
    scores_in = ctx.inputs["indist"] if "indist" in ctx.inputs else ctx.inputs["clean"]
    base = {N.S_ATTACK: s, N.STEPS: steps, N.S_EVAL: ctx.cfg.s_eval,
            N.N_IN: len(next(iter(scores_in.values()))), N.N_OUT: int(x.shape[0])}

    def rank(measure: str, out: np.ndarray) -> dict:
        """The AUROC of ``out`` against the in-distribution scores, and its examples."""
        s_in = scores_in[measure]
        labels, scores = np.r_[np.zeros(len(s_in)), np.ones(len(out))], np.r_[s_in, out]
        return {"value": auroc(labels, scores), "examples": {"score": scores, "label": labels}}

    clean = uncertainty_scores(no_grad_probs(ctx, x, "eval"))
    rows = []
    for measure in p["measures"]:
        if np.ptp(np.r_[scores_in[measure], clean[measure]]) == 0:
            continue  # a constant score (BALD of a deterministic model) ranks nothing
        rows.append(ctx.result(N.ADV_OOD, base | {N.EPS: 0.0, N.STEP_SIZE: 0.0}, measure,
                               N.AUROC, dataset=name, **rank(measure, clean[measure])))
        for eps in p["eps_grid"]:
            step_size = eps * p["step_fraction"]
            gen = ctx.gen("attack", measure, str(eps))
            lower = LowerUncertainty(measure=measure, eps=eps, step_size=step_size, steps=steps,
                                     n_samples=s)
            x_adv = torch.cat(in_attack_batches(
                ctx, s, functools.partial(lower, ctx.model, generator=gen), x,
                attack="lower_uncertainty"))
            if p["preprocessing"] == "unit":  # other scales leave [0, 1] by design
                check_budget(x, x_adv, eps, "linf", attack="lower_uncertainty")
            out = uncertainty_scores(no_grad_probs(ctx, x_adv, "eval"))[measure]
            knobs = base | {N.EPS: float(eps), N.STEP_SIZE: step_size}
            rows.append(ctx.result(N.ADV_OOD, knobs, measure, N.AUROC, dataset=name,
                                   **rank(measure, out)))
    return CellOutcome(rows=rows)
