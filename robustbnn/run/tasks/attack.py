"""Task ``attack``: any registered iterative attack (PGD-EOT, or a plug-in) at one (eps, S).

The attack class comes from ``robustbnn.attacks.ATTACKS`` by name and is built from the cell's
params, for the fields it has (``eps``, ``n_samples``, ``steps``, ``restarts``, ``step_size``,
``objective``, ``label``); a plug-in attack registered in ``ATTACKS`` runs like PGD. Rows have
the attack's name as their task and the same metrics as FGSM.
"""

from __future__ import annotations

import dataclasses

import torch

from robustbnn.attacks import ATTACKS
from robustbnn.report import names as N
from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context
from robustbnn.run.tasks._scoring import adversarial_rows, in_attack_batches

__all__ = ["build_attack", "run"]

FIELDS = {"eps": N.EPS, "n_samples": N.S_ATTACK, "steps": N.STEPS, "restarts": N.RESTARTS,
          "step_size": N.STEP_SIZE, "objective": N.OBJECTIVE, "label": N.LABEL}


def build_attack(name: str, params: dict) -> object:
    """An instance of attack ``name`` with the cell's settings for the fields it declares."""
    cls = ATTACKS.get(name)
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    return cls(**{f: params[k] for f, k in FIELDS.items() if f in fields and k in params})


def run(ctx: Context) -> CellOutcome:
    """Attack the first ``n`` test points and evaluate them with fresh samples."""
    p = ctx.params
    attack = build_attack(p["attack"], p)
    x, y = ctx.test_head(p[N.N])
    gen = ctx.gen("attack")
    x_adv = torch.cat(in_attack_batches(
        ctx, p[N.S_ATTACK], lambda xb, yb: attack(ctx.model, xb, yb, generator=gen),
        x, y)).detach()
    knobs = {k: p[k] for k in (N.EPS, N.S_ATTACK) } | {N.S_EVAL: ctx.cfg.s_eval}
    knobs |= {k: p[k] for k in (N.STEPS, N.RESTARTS, N.STEP_SIZE, N.OBJECTIVE, N.LABEL, N.N)}
    return CellOutcome(rows=adversarial_rows(ctx, p["attack"], knobs, x_adv, y,
                                             clean_scores=ctx.inputs.get("clean")))
