"""Task ``fgsm``: FGSM at every eps of the grid with one S_attack (BHN Fig. 5 and 7).

The single-step direction does not depend on eps, so one MC gradient serves the grid; each eps
is evaluated with fresh samples. The rows include two Carlini et al. (2019) checks that need
only this cell: ``gradient_nonzero`` (the fraction of inputs with a nonzero gradient sign) and
``accuracy_monotone`` (the largest rise of accuracy with eps, within the MC tolerance).
"""

from __future__ import annotations

import dataclasses

import torch

from robustbnn.attacks import FGSM
from robustbnn.attacks.budget import check_budget
from robustbnn.attacks.sanity import Check, accuracy_monotone
from robustbnn.results import names as N
from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context
from robustbnn.run.tasks._scoring import adversarial_rows, in_attack_batches

__all__ = ["attack_of", "check_rows", "run"]

TOL = 0.01  # MC evaluation noise allowed by the monotonicity and random-noise checks


def attack_of(params: dict) -> FGSM:
    """The FGSM setting of a cell's params (eps 0: the grid is applied afterwards)."""
    return FGSM(eps=float(params.get(N.EPS, 0.0)), n_samples=params[N.S_ATTACK],
                objective=params[N.OBJECTIVE], label=params[N.LABEL], clip=params[N.CLIP])


def check_rows(ctx: Context, check: Check, name: str, knobs: dict) -> list[dict]:
    """A sanity check as two ``fgsm_sanity`` rows: its ``value`` and ``passed`` (1 or 0)."""
    return [ctx.result(N.FGSM_SANITY, knobs, name, N.VALUE, check.value),
            ctx.result(N.FGSM_SANITY, knobs, name, N.PASSED, float(check.passed))]


def run(ctx: Context) -> CellOutcome:
    """FGSM rows for every eps in the cell's grid, plus its two sanity-check rows."""
    p = ctx.params
    attack = attack_of(p)
    x, y = ctx.test_head(p[N.N])
    gen = ctx.gen("attack")
    direction = torch.cat(in_attack_batches(
        ctx, attack.n_samples, lambda xb, yb: attack.direction(ctx.model, xb, yb, generator=gen),
        x, y, attack=N.FGSM))  # (B, *)
    base = {N.S_ATTACK: attack.n_samples, N.OBJECTIVE: attack.objective, N.LABEL: attack.label}
    nonzero = direction.flatten(1).abs().sum(1).gt(0).double().mean().item()
    rows = check_rows(ctx, Check(nonzero, nonzero == 1.0, {}), "gradient_nonzero", base)
    accuracies = []
    for eps in p["eps_grid"]:
        x_adv = dataclasses.replace(attack, eps=eps).perturb(x, direction)
        check_budget(x, x_adv, eps, "linf", attack=N.FGSM, box=attack.clip)
        knobs = {N.EPS: float(eps), N.S_ATTACK: attack.n_samples, N.S_EVAL: ctx.cfg.s_eval,
                 N.OBJECTIVE: attack.objective, N.LABEL: attack.label, N.CLIP: attack.clip}
        eps_rows = adversarial_rows(ctx, N.FGSM, knobs, x_adv, y,
                                    clean_scores=ctx.inputs.get("clean"))
        accuracies.append(eps_rows[0]["value"])
        rows += eps_rows
    if accuracies:
        check = accuracy_monotone(p["eps_grid"], accuracies, tol=TOL)
        rows += check_rows(ctx, check, "accuracy_monotone", base)
    return CellOutcome(rows=rows)
