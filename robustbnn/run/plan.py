"""A suite's config -> the ordered cells of a run and their dependencies (``--plan``).

Order: per model its contract (the cheap clauses of the model contract, which every cell of
the model waits for), training, clean metrics, attacks, OOD sets and shifted test sets; then
the held-out-class retrainings. Every cell comes after the cells it depends on, so the order is
a valid sequential schedule, and ``results.csv`` lists rows in it whatever order cells
finished in.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from robustbnn.attacks.adaptive import DIFFERENTIABLE_MEASURES
from robustbnn.attacks.reliability import has_torchattacks
from robustbnn.bench_config import RobustnessKind
from robustbnn.config import config_identity
from robustbnn.data.heldout import parse_heldout
from robustbnn.data.shift.sets import levels
from robustbnn.models import MODELS
from robustbnn.results import names as N
from robustbnn.results.names import ShiftKind
from robustbnn.run.cells import CELL_FORMAT, Cell, canonical_json
from robustbnn.run.cells import CellKind as K
from robustbnn.run.context import RunSpec, bench_data, spec_at_seed
from robustbnn.run.ood_cells import ood_cells
from robustbnn.run.tasks.contract import contract_cell
from robustbnn.settings import SuiteAttack
from robustbnn.training.fit_or_load import model_cache_key

__all__ = ["Plan", "build_plan", "format_plan"]



@dataclasses.dataclass(frozen=True)
class Plan:
    """The cells of a run, in a valid sequential order.

    Attributes:
        spec: What every worker needs to run any cell.
        cells: The cells, dependencies first.
        identity: The run configuration a run folder belongs to (config, data, device).
    """

    spec: RunSpec
    cells: tuple[Cell, ...]
    identity: dict[str, Any]

    def by_id(self) -> dict[str, Cell]:
        """Cells by id."""
        return {c.id: c for c in self.cells}


def _train(spec: RunSpec, name: str, heldout: int | None) -> Cell:
    cfg = spec.cfg
    mcfg = spec.resolved().model(name)
    data = bench_data(spec, heldout)
    key = model_cache_key(name, mcfg, data, cfg.seed)
    params = {"config": config_identity(mcfg), "data": data.fingerprint, "seed": cfg.seed,
              "heldout": heldout, "cache_key": key}
    where = "" if heldout is None else f" without class {heldout}"
    return Cell(K.TRAIN, name, _json(params), label=f"train {name}{where}")


def _fidelity_cells(spec: RunSpec, cells: list[Cell]) -> list[Cell]:
    """The fidelity reference's training cell at ``fidelity_seed`` (unless ``cells`` hold it),
    then one fidelity cell per other model of the run, after both trainings."""
    cfg = spec.cfg
    ref = cfg.fidelity_reference
    if not ref:
        return []
    ref_train = _train(spec_at_seed(spec, cfg.fidelity_seed), ref, None)
    out = [] if any(c.id == ref_train.id for c in cells) else [dataclasses.replace(
        ref_train, label=f"train {ref} (fidelity reference, seed {cfg.fidelity_seed})")]
    n_test = len(bench_data(spec).test)
    for name in cfg.models:
        if name == ref:
            continue
        params = {N.REFERENCE: ref, "reference_seed": cfg.fidelity_seed,
                  "reference_samples": cfg.fidelity_samples, N.S_EVAL: cfg.s_eval,
                  "n_test": n_test, "memory_mb": cfg.memory_mb}
        train = _train(spec, name, None)
        out.append(Cell(K.FIDELITY, name, params, (train.id, ref_train.id),
                        f"fidelity {name} vs {ref}"))
    return out


def _json(params: dict[str, Any]) -> dict[str, Any]:
    """Params as plain JSON data (tuples become lists), as they are hashed and stored."""
    return json.loads(canonical_json(params))


def _model_cells(spec: RunSpec, name: str) -> list[Cell]:
    """The cells of one model, in plan order: training, clean scores, its attacks, the
    budget and detector-aware cells, its OOD sets and its shifted test sets."""
    cfg = spec.cfg
    train = _train(spec, name, None)
    n_test = len(bench_data(spec).test)
    # memory_mb decides which Monte Carlo draws serve which examples: part of every id.
    clean = Cell(K.CLEAN, name, {N.S_EVAL: cfg.s_eval, "n_test": n_test,
                                 "memory_mb": cfg.memory_mb}, (train.id,),
                 f"clean {name}")
    cells = [train, clean]
    both = (train.id, clean.id)
    for attack in cfg.attacks:
        if attack == SuiteAttack.FGSM:
            cells += _fgsm_cells(spec, name, train.id, both)
        elif attack == SuiteAttack.TARGETED_IFGSM:
            cells += _targeted_cells(spec, name, train.id)
        else:
            cells += _attack_cells(spec, name, attack, both)
    cells += _budget_cells(spec, name, both)
    cells += ood_cells(spec, name, train.id, both)
    cells += _shift_cells(spec, name, train.id)
    return cells


def _fgsm_cells(spec: RunSpec, name: str, train: str, both: tuple[str, ...]) -> list[Cell]:
    """FGSM over the eps grid and its sanity checks, per S_attack, of one model."""
    cfg = spec.cfg
    base = {N.OBJECTIVE: cfg.attack_objective, N.LABEL: cfg.attack_label, N.CLIP: cfg.attack_clip,
            N.S_EVAL: cfg.s_eval, "memory_mb": cfg.memory_mb}
    cells = []
    for s in cfg.s_attack:
        fgsm = base | {N.S_ATTACK: s, "eps_grid": [float(e) for e in cfg.eps], N.N: 0}
        cells.append(Cell(K.FGSM, name, fgsm, both, f"fgsm {name} S={s}"))
        sanity = base | {N.S_ATTACK: s, N.EPS: float(cfg.sanity_eps), N.N: cfg.n_sanity}
        cells.append(Cell(K.SANITY, name, sanity, (train,), f"sanity {name} S={s}"))
    return cells


def _targeted_cells(spec: RunSpec, name: str, train: str) -> list[Cell]:
    """The targeted attack's cell of one model (none with ``targeted_steps`` 0)."""
    cfg = spec.cfg
    if cfg.targeted_steps <= 0:
        return []
    stochastic = MODELS.get(name).stochastic
    params = {N.STEPS: cfg.targeted_steps, N.STEP_SIZE: cfg.targeted_step_size,
              N.S_ATTACK: cfg.targeted_s_attack if stochastic else 1,
              N.OBJECTIVE: cfg.attack_objective, N.TARGET: 0,
              "every": cfg.targeted_every, N.N: cfg.n_targeted,
              N.S_EVAL: cfg.s_eval, "memory_mb": cfg.memory_mb}
    return [Cell(K.TARGETED, name, params, (train,), f"targeted {name}")]


# PGD's cell params before attacks had settings of their own: kept, so its ids do not change.
PGD_PARAMS = {"steps": N.STEPS, "restarts": N.RESTARTS, "step_size": N.STEP_SIZE,
              "objective": N.OBJECTIVE, "label": N.LABEL}


def _attack_cells(spec: RunSpec, name: str, attack: str, both: tuple[str, ...]) -> list[Cell]:
    """The ``attack`` cells of one model and one generic attack, at each (eps, S_attack) of
    its resolved settings (:class:`robustbnn.settings.AttackSettings`)."""
    cfg = spec.cfg
    resolved = spec.resolved().attack(attack)
    settings = resolved.settings
    if attack == "pgd":
        defaults = {f.name: f.default for f in dataclasses.fields(resolved.attack)}
        own = {PGD_PARAMS[k]: v for k, v in settings.items() if k in PGD_PARAMS}
        own |= {k: v for k, v in settings.items()  # a --set away from PGD's defaults only
                if k not in PGD_PARAMS and v != defaults[k]}
    else:
        own = {"norm": resolved.norm, "settings": settings}
    cells = []
    for eps in resolved.eps:
        for s in resolved.s_attack:
            params = {"attack": attack, N.EPS: float(eps), N.S_ATTACK: s, **own, N.N: cfg.n_pgd,
                      N.S_EVAL: cfg.s_eval, "memory_mb": cfg.memory_mb}
            cells.append(Cell(K.ATTACK, name, _json(params), both,
                              f"{attack} {name} eps={eps:g} S={s}"))
    return cells


def _shift_cells(spec: RunSpec, name: str, train: str) -> list[Cell]:
    """The dataset-shift cells of one model, one per kind of ``cfg.shift``."""
    cfg = spec.cfg
    n_test = len(bench_data(spec).test)
    n = cfg.n_shift if 0 < cfg.n_shift < n_test else n_test
    cells = []
    for kind in cfg.shift:
        params = {N.SHIFT: kind, "levels": levels(kind, cfg.shift_angles, cfg.shift_corruptions),
                  "seed": cfg.shift_seed if kind == ShiftKind.CORRUPTED else 0, N.N: n,
                  "measures": list(cfg.extra_measures), N.S_EVAL: cfg.s_eval,
                  "memory_mb": cfg.memory_mb}
        cells.append(Cell(K.SHIFT, name, params, (train,), f"shift {name} {kind}"))
    return cells


def _budget_cells(spec: RunSpec, name: str, both: tuple[str, ...]) -> list[Cell]:
    """The budget-curve and detector-aware cells of one model (``cfg.robustness``)."""
    cfg = spec.cfg
    stochastic = MODELS.get(name).stochastic
    cells = []
    if RobustnessKind.BUDGET in cfg.robustness:
        for eps in cfg.budget_eps:
            params = {N.EPS: float(eps), N.STEP_SIZE: float(eps) * cfg.robust_step_fraction,
                      "s_grid": list(cfg.budget_s_attack), "steps_grid": list(cfg.budget_steps),
                      "s_cap": cfg.budget_s_cap if stochastic else 0,
                      N.RESTARTS: cfg.budget_restarts, N.K: cfg.worst_k, "eot_tol": cfg.eot_tol,
                      "objectives": [o.value for o in cfg.budget_objectives],
                      "snr_min": cfg.snr_min, "stochastic": stochastic,
                      "square_queries": cfg.square_queries if has_torchattacks() else 0,
                      "square_s_attack": cfg.square_s_attack if stochastic else 1,
                      N.N: cfg.n_robust, N.S_EVAL: cfg.s_eval, "memory_mb": cfg.memory_mb}
            cells.append(Cell(K.BUDGET, name, params, both, f"budget {name} eps={eps:g}"))
    if RobustnessKind.DETECTOR_AWARE in cfg.robustness:
        for eps in cfg.adaptive_eps:
            params = {N.EPS: float(eps), N.STEP_SIZE: float(eps) * cfg.robust_step_fraction,
                      N.STEPS: cfg.adaptive_steps,
                      N.S_ATTACK: cfg.adaptive_s_attack if stochastic else 1,
                      N.FPR: cfg.detector_fpr, "measures": list(DIFFERENTIABLE_MEASURES),
                      N.N: cfg.n_robust, N.S_EVAL: cfg.s_eval, "memory_mb": cfg.memory_mb}
            cells.append(Cell(K.DETECTOR_AWARE, name, params, both,
                              f"detector-aware {name} eps={eps:g}"))
    return cells


def build_plan(spec: RunSpec) -> Plan:
    """The plan of ``spec.cfg``, as :func:`robustbnn.bench.check_bench` returned it (models
    resolved, every name checked). Loads the data for its fingerprint.

    Raises:
        DataError: When the dataset is missing or corrupt.
    """
    cfg = spec.cfg
    data = bench_data(spec)
    cells: list[Cell] = []
    for name in cfg.models:
        cells += _model_cells(spec, name)
    cells += _fidelity_cells(spec, cells)
    for ood in cfg.ood:
        k = parse_heldout(ood, data.num_classes)
        if k is None:
            continue
        for name in cfg.models:
            if cfg.heldout_models and name not in cfg.heldout_models:
                continue
            train = _train(spec, name, k)
            params = {"k": k, N.S_EVAL: cfg.s_eval, "memory_mb": cfg.memory_mb}
            if cfg.ood_in_split != "test":
                params["in_split"] = cfg.ood_in_split
            cells += [train, Cell(K.HELDOUT, name, params, (train.id,),
                                  f"heldout {name} class {k}")]
    # config_identity: a field added later (ADDED_LATER) at its default leaves old runs' identity
    identity = _json({"format": CELL_FORMAT, "config": config_identity(cfg),
                      "data": data.fingerprint, "device": spec.device})
    return Plan(spec, tuple(_gated(spec, cells)), identity)


def _gated(spec: RunSpec, cells: list[Cell]) -> list[Cell]:
    """Each model's ``contract`` cell just before its first cell, and every cell of the model
    waiting for it (``Cell.after``: not in any id, so no other id or stream changes)."""
    out: list[Cell] = []
    gates: dict[str, str] = {}
    for cell in cells:
        if cell.model not in gates:
            gate = contract_cell(spec, cell.model)
            gates[cell.model] = gate.id
            out.append(gate)
        out.append(dataclasses.replace(cell, after=(gates[cell.model],)))
    return out


def format_plan(plan: Plan, done: set[str]) -> str:
    """The plan as a table: id, task, what, dependencies, and whether it is done."""
    lines = [f"{'cell':<12} {'task':<9} {'status':<6} {'depends on':<27} what"]
    for cell in plan.cells:
        deps = ",".join(d[:12] for d in cell.deps) or "-"
        status = "done" if cell.id in done else "todo"
        lines.append(f"{cell.id[:12]:<12} {cell.task:<9} {status:<6} {deps:<27} {cell.label}")
    n_done = sum(c.id in done for c in plan.cells)
    lines.append(f"{len(plan.cells)} cells: {n_done} done, {len(plan.cells) - n_done} to run")
    return "\n".join(lines) + "\n"
