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

from robustbnn.attacks import ATTACKS
from robustbnn.attacks.adaptive import DIFFERENTIABLE_MEASURES
from robustbnn.attacks.reliability import has_torchattacks
from robustbnn.data.heldout import parse_heldout
from robustbnn.data.ood_sets import BUILTIN_OOD_SETS, check_ood_name
from robustbnn.data.shift.sets import check_levels, levels
from robustbnn.errors import ConfigError
from robustbnn.models import MODELS
from robustbnn.ood.extra import EXTRA_MEASURES
from robustbnn.ood.uncertainty import BUILTIN_MEASURES, UNCERTAINTIES
from robustbnn.ood.uncertainty import measure as get_measure
from robustbnn.results import names as N
from robustbnn.run.cells import CELL_FORMAT, Cell, canonical_json
from robustbnn.run.context import RunSpec, bench_data, ood_digest
from robustbnn.run.tasks.contract import contract_cell
from robustbnn.training.fit_or_load import model_cache_key

__all__ = ["Plan", "build_plan", "format_plan"]

SPECIAL_ATTACKS = ("fgsm", "targeted_ifgsm")  # their own tasks; any other is an ``attack`` cell
# The robustness leaderboard's cell kinds (BenchConfig.robustness), in plan order.
ROBUSTNESS = ("budget", "detector_aware", "adversarial_ood")


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
    params = {"config": dataclasses.asdict(mcfg), "data": data.fingerprint, "seed": cfg.seed,
              "heldout": heldout, "cache_key": key}
    where = "" if heldout is None else f" without class {heldout}"
    return Cell("train", name, _json(params), label=f"train {name}{where}")


def _json(params: dict[str, Any]) -> dict[str, Any]:
    """Params as plain JSON data (tuples become lists), as they are hashed and stored."""
    return json.loads(canonical_json(params))


def _model_cells(spec: RunSpec, name: str) -> list[Cell]:
    cfg = spec.cfg
    train = _train(spec, name, None)
    n_test = len(bench_data(spec).test)
    # memory_mb decides which Monte Carlo draws serve which examples: part of every id.
    clean = Cell("clean", name, {N.S_EVAL: cfg.s_eval, "n_test": n_test,
                                 "memory_mb": cfg.memory_mb}, (train.id,),
                 f"clean {name}")
    cells = [train, clean]
    both = (train.id, clean.id)
    base = {N.OBJECTIVE: cfg.attack_objective, N.LABEL: cfg.attack_label, N.CLIP: cfg.attack_clip,
            N.S_EVAL: cfg.s_eval, "memory_mb": cfg.memory_mb}
    stochastic = MODELS.get(name).stochastic
    for attack in cfg.attacks:
        if attack == "fgsm":
            for s in cfg.s_attack:
                fgsm = base | {N.S_ATTACK: s, "eps_grid": [float(e) for e in cfg.eps], N.N: 0}
                cells.append(Cell("fgsm", name, fgsm, both, f"fgsm {name} S={s}"))
                sanity = base | {N.S_ATTACK: s, N.EPS: float(cfg.sanity_eps), N.N: cfg.n_sanity}
                cells.append(Cell("sanity", name, sanity, (train.id,), f"sanity {name} S={s}"))
        elif attack == "targeted_ifgsm":
            if cfg.targeted_steps > 0:
                params = {N.STEPS: cfg.targeted_steps, N.STEP_SIZE: cfg.targeted_step_size,
                          N.S_ATTACK: cfg.targeted_s_attack if stochastic else 1,
                          N.OBJECTIVE: cfg.attack_objective, N.TARGET: 0,
                          "every": cfg.targeted_every, N.N: cfg.n_targeted,
                          N.S_EVAL: cfg.s_eval, "memory_mb": cfg.memory_mb}
                cells.append(Cell("targeted", name, params, (train.id,), f"targeted {name}"))
        else:
            cells += _attack_cells(spec, name, attack, both)
    cells += _budget_cells(spec, name, both)
    sets = [ood for ood in cfg.ood if parse_heldout(ood) is None]
    scored = both
    if sets and cfg.ood_in_split != "test":
        split = cfg.ood_in_split
        params = {"split": split, N.N: len(getattr(bench_data(spec), split)),
                  N.S_EVAL: cfg.s_eval, "memory_mb": cfg.memory_mb}
        indist = Cell("indist", name, params, (train.id,), f"in-dist {name} {split}")
        cells.append(indist)
        scored = (train.id, indist.id)
    # An OOD cell's id holds its set's content digest (Cell.content), its streams do not.
    content = {ood: {"ood": ood_digest(spec, ood)} for ood in sets}
    for ood in sets:
        params = {"set": ood, "n_ood": cfg.ood_count(ood), "preprocessing": cfg.ood_preprocessing,
                  "seed": cfg.seed, N.S_EVAL: cfg.s_eval, "in_split": cfg.ood_in_split,
                  "memory_mb": cfg.memory_mb}
        cells.append(Cell("ood", name, params, scored, f"ood {name} {ood}",
                          content=content[ood]))
    cells += _measure_cells(spec, name, train.id, sets, content)
    if "adversarial_ood" in cfg.robustness:
        # Built-in sets as adv_ood_sets names them (the suites' cells), then every other set.
        adv_sets = [s for s in cfg.adv_ood_sets if s in sets]
        adv_sets += [s for s in sets if s not in BUILTIN_OOD_SETS and s not in adv_sets]
        for ood in adv_sets:
            n_ood = cfg.ood_count(ood)
            params = {"set": ood, "n_ood": n_ood, N.N: cfg.n_adv_ood or n_ood, "seed": cfg.seed,
                      "preprocessing": cfg.ood_preprocessing, "in_split": cfg.ood_in_split,
                      "eps_grid": [float(e) for e in cfg.adv_ood_eps],
                      "step_fraction": cfg.robust_step_fraction, N.STEPS: cfg.adv_ood_steps,
                      N.S_ATTACK: cfg.adv_ood_s_attack if stochastic else 1,
                      "measures": list(DIFFERENTIABLE_MEASURES), N.S_EVAL: cfg.s_eval,
                      "memory_mb": cfg.memory_mb}
            cells.append(Cell("adv_ood", name, params, scored, f"adversarial ood {name} {ood}",
                              content=content[ood]))
    cells += _shift_cells(spec, name, train.id)
    return cells


def _measure_cells(spec: RunSpec, name: str, train: str, sets: list[str],
                   content: dict[str, dict[str, str]]) -> list[Cell]:
    """One ``measure`` cell per (plug-in measure, OOD set) of one model: a plug-in measure's
    name and version are in its cells' ids only, so adding one reuses every other cell."""
    cfg = spec.cfg
    cells = []
    for m in (m for m in UNCERTAINTIES.names() if m not in BUILTIN_MEASURES):
        for ood in sets:
            params = {"measure": m, "version": get_measure(m).version, "set": ood,
                      "n_ood": cfg.ood_count(ood), "preprocessing": cfg.ood_preprocessing,
                      "seed": cfg.seed, N.S_EVAL: cfg.s_eval, "in_split": cfg.ood_in_split,
                      "memory_mb": cfg.memory_mb}
            cells.append(Cell("measure", name, params, (train,), f"measure {m} {name} {ood}",
                              content=content[ood]))
    return cells


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
            cells.append(Cell("attack", name, _json(params), both,
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
                  "seed": cfg.shift_seed if kind == N.SHIFT_CORRUPTED else 0, N.N: n,
                  "measures": list(cfg.extra_measures), N.S_EVAL: cfg.s_eval,
                  "memory_mb": cfg.memory_mb}
        cells.append(Cell("shift", name, params, (train,), f"shift {name} {kind}"))
    return cells


def _budget_cells(spec: RunSpec, name: str, both: tuple[str, ...]) -> list[Cell]:
    """The budget-curve and detector-aware cells of one model (``cfg.robustness``)."""
    cfg = spec.cfg
    stochastic = MODELS.get(name).stochastic
    cells = []
    if "budget" in cfg.robustness:
        for eps in cfg.budget_eps:
            params = {N.EPS: float(eps), N.STEP_SIZE: float(eps) * cfg.robust_step_fraction,
                      "s_grid": list(cfg.budget_s_attack), "steps_grid": list(cfg.budget_steps),
                      N.RESTARTS: cfg.budget_restarts, N.K: cfg.worst_k, "eot_tol": cfg.eot_tol,
                      "snr_min": cfg.snr_min, "stochastic": stochastic,
                      "square_queries": cfg.square_queries if has_torchattacks() else 0,
                      "square_s_attack": cfg.square_s_attack if stochastic else 1,
                      N.N: cfg.n_robust, N.S_EVAL: cfg.s_eval, "memory_mb": cfg.memory_mb}
            cells.append(Cell("budget", name, params, both, f"budget {name} eps={eps:g}"))
    if "detector_aware" in cfg.robustness:
        for eps in cfg.adaptive_eps:
            params = {N.EPS: float(eps), N.STEP_SIZE: float(eps) * cfg.robust_step_fraction,
                      N.STEPS: cfg.adaptive_steps,
                      N.S_ATTACK: cfg.adaptive_s_attack if stochastic else 1,
                      N.FPR: cfg.detector_fpr, "measures": list(DIFFERENTIABLE_MEASURES),
                      N.N: cfg.n_robust, N.S_EVAL: cfg.s_eval, "memory_mb": cfg.memory_mb}
            cells.append(Cell("detector_aware", name, params, both,
                              f"detector-aware {name} eps={eps:g}"))
    return cells


IN_SPLITS = ("test", "val")


def check_names(spec: RunSpec) -> None:
    """Every model, attack and OOD set named by the config exists (before any work starts)."""
    cfg = spec.cfg
    if cfg.ood_in_split not in IN_SPLITS:
        raise ConfigError(f"ood_in_split must be one of {list(IN_SPLITS)}, got "
                          f"{cfg.ood_in_split!r}")
    unknown = sorted(set(dict(cfg.ood_counts)) - set(cfg.ood))
    if unknown:
        raise ConfigError(f"ood_counts names sets the run does not score: {unknown}; "
                          f"its sets: {list(cfg.ood)}")
    for name in (*cfg.models, *cfg.heldout_models):
        MODELS.get(name)
    for attack in cfg.attacks:
        ATTACKS.get(attack)
    unknown = sorted(set(cfg.robustness) - set(ROBUSTNESS))
    if unknown:
        raise ConfigError(f"unknown robustness cell kind(s) {unknown}; known: {list(ROBUSTNESS)}")
    for ood in cfg.adv_ood_sets:
        check_ood_name(ood)
    check_levels(cfg.shift, cfg.shift_angles, cfg.shift_corruptions)
    for measure in cfg.extra_measures:
        EXTRA_MEASURES.get(measure)
    for ood in cfg.ood:
        if parse_heldout(ood) is None:
            check_ood_name(ood)


def build_plan(spec: RunSpec) -> Plan:
    """The plan of ``spec.cfg`` (models already resolved). Loads the data for its fingerprint.

    Raises:
        UnknownNameError: For an unknown model, attack or OOD set.
        DataError: When the dataset is missing or corrupt.
    """
    check_names(spec)
    cfg = spec.cfg
    data = bench_data(spec)
    cells: list[Cell] = []
    for name in cfg.models:
        cells += _model_cells(spec, name)
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
            cells += [train, Cell("heldout", name, params, (train.id,),
                                  f"heldout {name} class {k}")]
    identity = _json({"format": CELL_FORMAT, "config": dataclasses.asdict(cfg),
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
