"""Task ``train``: the cell's model, built and then loaded from the cache or trained
(:func:`robustbnn.training.fit_or_load.fit_or_load`), and kept for the process's next cells."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import torch

from robustbnn.contract.checked import Checked
from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context, RunSpec, bench_data, spec_at_seed
from robustbnn.training.fit_or_load import TrainSetup, fit_or_load
from robustbnn.training.memo import TrainedModels

__all__ = ["MODELS_IN_PROCESS", "run", "trained_model"]

MODELS_IN_PROCESS = TrainedModels(keep=2)
"""Per process: the last trained models, so one model's consecutive cells load it once."""


def trained_model(spec: RunSpec, name: str, heldout: int | None) -> Checked:
    """The trained model of (``name``, ``heldout``), loaded once per process, contract-checked.

    Normally a cache hit (its training cell ran first); if the entry has gone, it is retrained
    here under the same lock and key, which gives the same weights.
    """
    def load() -> torch.nn.Module:
        data = bench_data(spec, heldout)
        mcfg = spec.resolved().model(name)
        setup = TrainSetup(spec.cfg.seed, torch.device(spec.device), Path(spec.cache_dir),
                           spec.progress)
        model, _ = fit_or_load(name, mcfg, data, setup)
        return model

    return MODELS_IN_PROCESS.get((spec, name, heldout), name, load)


def run(ctx: Context) -> CellOutcome:
    """Train (or load) the cell's model; its outcome is the :class:`FitRecord`."""
    heldout = ctx.params["heldout"]
    mcfg = ctx.spec.resolved().model(ctx.cell.model)
    # The cell's seed: the run's, or fidelity_seed for the fidelity reference's training.
    spec = spec_at_seed(ctx.spec, ctx.params["seed"])
    setup = TrainSetup(spec.cfg.seed, ctx.device, Path(ctx.spec.cache_dir), ctx.spec.progress)
    model, record = fit_or_load(ctx.cell.model, mcfg, ctx.data, setup)
    MODELS_IN_PROCESS.remember((spec, ctx.cell.model, heldout), ctx.cell.model, model)
    return CellOutcome(info=dataclasses.asdict(record))
