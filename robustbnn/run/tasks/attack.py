"""Task ``attack``: any registered attack but FGSM and the targeted one, at one (eps, S).

The attack class comes from ``robustbnn.attacks.ATTACKS`` by name and is built from the cell's
resolved settings (:mod:`robustbnn.settings`): PGD's cells carry its settings as they always
have (``steps``, ``restarts``, ``step_size``, ``objective``, ``label``), any other attack's
under ``settings`` with its ``norm``. The attack gets copies of the test points; one that
changes them in place is refused by name (:func:`robustbnn.attacks.copies.call_on_copies`),
and every batch it returns is checked against its budget around the pristine points
(:func:`robustbnn.attacks.budget.check_budget`) before it is scored. Rows have the
attack's name as their task and the same metrics as FGSM.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import torch
from torch import Tensor

from robustbnn.attacks import ATTACKS
from robustbnn.attacks.base import attack_norm
from robustbnn.attacks.budget import check_budget
from robustbnn.config import check_type
from robustbnn.results import names as N
from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context
from robustbnn.run.tasks._scoring import adversarial_rows, in_attack_batches

__all__ = ["build_attack", "run"]

FIELDS = {"eps": N.EPS, "n_samples": N.S_ATTACK, "steps": N.STEPS, "restarts": N.RESTARTS,
          "step_size": N.STEP_SIZE, "objective": N.OBJECTIVE, "label": N.LABEL}
CELL_KEYS = ("attack", N.EPS, N.S_ATTACK, N.N, N.S_EVAL, "memory_mb", "norm", "settings")


def build_attack(name: str, params: dict) -> Any:
    """An instance of attack ``name`` with the cell's eps, S_attack and settings.

    A cell with ``settings`` (any attack but PGD) gives them whole, typed by the attack's
    field annotations (JSON lists back to tuples); a PGD cell gives its fields by their knob
    names (:data:`FIELDS`) and any other field of PGD under its own name.
    """
    cls = ATTACKS.get(name)
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    given = {f: params[k] for f, k in FIELDS.items() if f in fields and k in params}
    if "settings" in params:
        given = {f: params[k] for f, k in (("eps", N.EPS), ("n_samples", N.S_ATTACK))
                 if f in fields}
        hints = typing.get_type_hints(cls)
        given |= {f: check_type(v, hints[f], f"{name}.{f}") for f, v in params["settings"].items()}
    else:
        given |= {k: v for k, v in params.items()
                  if k in fields and k not in FIELDS and k not in CELL_KEYS}
    return cls(**given)


def _knob(value: Any) -> Any:
    return value if isinstance(value, bool | int | float | str) else str(value)


def run(ctx: Context) -> CellOutcome:
    """Attack the first ``n`` test points, check each batch's budget, and evaluate them with
    fresh samples."""
    p = ctx.params
    name = p["attack"]
    attack = build_attack(name, p)
    norm = p.get("norm") or attack_norm(type(attack))
    x, y = ctx.test_head(p[N.N])
    gen = ctx.gen("attack")

    def attacked(xb: Tensor, yb: Tensor) -> Tensor:
        return attack(ctx.model, xb, yb, generator=gen)

    def within_budget(xb: Tensor, yb: Tensor, x_adv: Tensor) -> None:
        check_budget(xb, x_adv, p[N.EPS], norm, attack=name)  # xb: the pristine points

    x_adv = torch.cat(in_attack_batches(ctx, p[N.S_ATTACK], attacked, x, y, attack=name,
                                        check=within_budget)).detach()
    knobs = {k: p[k] for k in (N.EPS, N.S_ATTACK)} | {N.S_EVAL: ctx.cfg.s_eval}
    if "settings" in p:
        knobs |= {"norm": norm} | {k: _knob(v) for k, v in p["settings"].items()}
        knobs |= {N.N: p[N.N]}
    else:
        knobs |= {k: p[k] for k in (N.STEPS, N.RESTARTS, N.STEP_SIZE, N.OBJECTIVE, N.LABEL, N.N)}
        knobs |= {k: _knob(v) for k, v in p.items() if k not in knobs and k not in CELL_KEYS}
    return CellOutcome(rows=adversarial_rows(ctx, name, knobs, x_adv, y,
                                             clean_scores=ctx.inputs.get("clean")))
