"""A model's OOD cells for the plan (:mod:`robustbnn.run.plan`): in-distribution scores,
one cell per OOD set, plug-in measures and adversarial OOD.

An OOD cell's id holds its set's content digest (``Cell.content``), its random streams do not.
"""

from __future__ import annotations

from robustbnn.attacks.adaptive import DIFFERENTIABLE_MEASURES
from robustbnn.bench_config import RobustnessKind
from robustbnn.data.heldout import parse_heldout
from robustbnn.data.ood_sets import BUILTIN_OOD_SETS
from robustbnn.models import MODELS
from robustbnn.ood.uncertainty import BUILTIN_MEASURES, UNCERTAINTIES
from robustbnn.ood.uncertainty import measure as get_measure
from robustbnn.results import names as N
from robustbnn.run.cells import Cell
from robustbnn.run.cells import CellKind as K
from robustbnn.run.context import RunSpec, bench_data, ood_digest

__all__ = ["ood_cells"]


def ood_cells(spec: RunSpec, name: str, train: str, both: tuple[str, ...]) -> list[Cell]:
    """The OOD cells of one model: the in-distribution scores of another split than test,
    one cell per OOD set (held-out classes aside), plug-in measures, adversarial OOD."""
    cfg = spec.cfg
    sets = [ood for ood in cfg.ood if parse_heldout(ood) is None]
    cells = []
    scored = both
    if sets and cfg.ood_in_split != "test":
        split = cfg.ood_in_split
        params = {"split": split, N.N: len(getattr(bench_data(spec), split)),
                  N.S_EVAL: cfg.s_eval, "memory_mb": cfg.memory_mb}
        indist = Cell(K.INDIST, name, params, (train,), f"in-dist {name} {split}")
        cells.append(indist)
        scored = (train, indist.id)
    # An OOD cell's id holds its set's content digest (Cell.content), its streams do not.
    content = {ood: {"ood": ood_digest(spec, ood)} for ood in sets}
    for ood in sets:
        params = {"set": ood, "n_ood": cfg.ood_count(ood), "preprocessing": cfg.ood_preprocessing,
                  "seed": cfg.seed, N.S_EVAL: cfg.s_eval, "in_split": cfg.ood_in_split,
                  "memory_mb": cfg.memory_mb}
        cells.append(Cell(K.OOD, name, params, scored, f"ood {name} {ood}",
                          content=content[ood]))
    cells += _measure_cells(spec, name, train, sets, content)
    if RobustnessKind.ADVERSARIAL_OOD in cfg.robustness:
        cells += _adv_ood_cells(spec, name, sets, scored, content)
    return cells


def _adv_ood_cells(spec: RunSpec, name: str, sets: list[str], scored: tuple[str, ...],
                   content: dict[str, dict[str, str]]) -> list[Cell]:
    """The adversarial-OOD cells of one model: the built-in sets as ``adv_ood_sets`` names
    them (the suites' cells), then every other set of the run."""
    cfg = spec.cfg
    stochastic = MODELS.get(name).stochastic
    adv_sets = [s for s in cfg.adv_ood_sets if s in sets]
    adv_sets += [s for s in sets if s not in BUILTIN_OOD_SETS and s not in adv_sets]
    cells = []
    for ood in adv_sets:
        n_ood = cfg.ood_count(ood)
        params = {"set": ood, "n_ood": n_ood, N.N: cfg.n_adv_ood or n_ood, "seed": cfg.seed,
                  "preprocessing": cfg.ood_preprocessing, "in_split": cfg.ood_in_split,
                  "eps_grid": [float(e) for e in cfg.adv_ood_eps],
                  "step_fraction": cfg.robust_step_fraction, N.STEPS: cfg.adv_ood_steps,
                  N.S_ATTACK: cfg.adv_ood_s_attack if stochastic else 1,
                  "measures": list(DIFFERENTIABLE_MEASURES), N.S_EVAL: cfg.s_eval,
                  "memory_mb": cfg.memory_mb}
        cells.append(Cell(K.ADV_OOD, name, params, scored, f"adversarial ood {name} {ood}",
                          content=content[ood]))
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
            cells.append(Cell(K.MEASURE, name, params, (train,), f"measure {m} {name} {ood}",
                              content=content[ood]))
    return cells
