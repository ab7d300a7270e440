"""A finished run's files from its stored cells alone: ``results.csv``/``.jsonl``, the
per-example OOD scores and the provenance in ``run.json``.

Everything here reads the cell store (:mod:`robustbnn.run.store`), never a live model, so an
interrupted run, resumed, ends with the bytes of an uninterrupted one.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import platform
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import torch

from robustbnn import __version__
from robustbnn.data.heldout import heldout_name
from robustbnn.models import MODELS
from robustbnn.portable import portable_text
from robustbnn.results.catalogue import RECORD, catalogue
from robustbnn.results.examples import examples_path, write_examples
from robustbnn.results.schema import Result
from robustbnn.results.scores import scores_path, write_scores
from robustbnn.results.store import write_json, write_results
from robustbnn.run.cells import Cell, CellKind
from robustbnn.run.context import bench_data
from robustbnn.run.plan import Plan
from robustbnn.run.runner import RunReport
from robustbnn.run.store import CellStore
from robustbnn.run.tasks._faults import FAULT_ARRAY

__all__ = ["assemble", "finished_cells", "git_sha", "write_run_json"]

# The kinds whose cells store per-example scores (the clean ones, an OOD set's, a held-out
# class's in and out).
SCORED_KINDS = (CellKind.CLEAN, CellKind.OOD, CellKind.HELDOUT)


def finished_cells(plan: Plan, store: CellStore,
                   report: RunReport) -> list[tuple[Cell, dict[str, Any]]]:
    """Every cell the run reports finished (reused or run), with its stored, verified JSON,
    in plan order (each file read once). None is skipped: a cell missing now fails the run.

    Raises:
        CellMissing: A finished cell whose file vanished or was damaged since; names it.
    """
    finished = {*report.reused, *report.ran}
    return [(cell, store.read(cell.id)) for cell in plan.cells if cell.id in finished]


def assemble(stored: list[tuple[Cell, dict[str, Any]]], store: CellStore, *,
             save_scores: bool) -> list[Result]:
    """``results.csv``/``.jsonl`` (plan order) and, with ``save_scores``, the per-example
    scores under ``scores/``, from stored cells; return the rows."""
    rows: list[Result] = []
    clean: dict[str, dict] = {}  # per model, the clean scores (read once)
    out = store.out_dir
    if not save_scores:  # the run's own score files: none may outlive the option
        store.remove_own("scores/")
    examples: dict[str, dict[str, np.ndarray]] = {}  # per model, its rows' examples
    for cell, payload in stored:
        rows += [Result.from_json(r) for r in payload["rows"]]
        if payload["arrays"]:
            examples.setdefault(cell.model, {}).update(store.examples(cell.id))
        if not save_scores:
            continue
        arrays = store.arrays(cell.id) if cell.task in SCORED_KINDS else {}
        if FAULT_ARRAY in arrays:  # a numerical_fault flag: no scores to write
            continue
        if cell.task == CellKind.CLEAN:
            clean[cell.model] = arrays
        elif cell.task == CellKind.OOD and cell.model in clean:
            _own_scores(store, cell.model, cell.params["set"])
            write_scores(out, cell.model, cell.params["set"], clean[cell.model], arrays)
        elif cell.task == CellKind.HELDOUT:
            split = {side: {k.split("/", 1)[1]: v for k, v in arrays.items()
                            if k.startswith(f"{side}/")} for side in ("in", "out")}
            name = heldout_name(cell.params["k"])
            _own_scores(store, cell.model, name)
            write_scores(out, cell.model, name, split["in"], split["out"])
    for model, arrays in examples.items():
        if arrays:
            path = examples_path(out, model)
            store.record([path.relative_to(out).as_posix()])
            write_examples(out, model, arrays)
    write_results(out, rows)
    return rows


def _own_scores(store: CellStore, model: str, dataset: str) -> None:
    """Record a score file as the run's own before it is written (robustbnn.run.ownership)."""
    path = scores_path(store.out_dir, model, dataset)
    store.record([path.relative_to(store.out_dir).as_posix()])


def git_sha() -> str | None:
    """The commit of the robustbnn checkout, if it is one."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=5, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def _device_name(device: str) -> str | None:
    if device == "cuda" and torch.cuda.is_available():
        return torch.cuda.get_device_name()
    return None


def _models(finished: list[tuple[Cell, dict[str, Any]]]) -> tuple[dict, dict]:
    """Per model its fit records and seconds, and per model its contract cell's record."""
    models: dict[str, dict[str, Any]] = {}
    contract: dict[str, dict[str, Any]] = {}
    for cell, stored in finished:
        if cell.task == CellKind.CONTRACT:  # its own entry: the models' seconds are their cells'
            contract[cell.model] = {**stored["info"], "seconds": stored["seconds"]}
            continue
        entry = models.setdefault(cell.model, {"seconds": 0.0})
        if cell.task == CellKind.TRAIN and cell.params["heldout"] is not None:
            k = heldout_name(cell.params["heldout"])
            entry.setdefault("heldout", {})[k] = {**stored["info"], "seconds": stored["seconds"]}
        elif cell.task == CellKind.TRAIN:
            entry.update(stored["info"])
        entry["seconds"] += stored["seconds"]
    return models, contract


def write_run_json(plan: Plan, finished: list[tuple[Cell, dict[str, Any]]], report: RunReport,
                   started: dt.datetime, face: dict[str, Any],
                   refused: dict[str, dict[str, Any]] | None = None, *,
                   rows: list[Result] | None = None) -> None:
    """Provenance in ``<run>/run.json``: versions, device, config, data, per-model fit
    records, what ran, and the models the model contract refused (``refused``, which the
    leaderboard lists).

    Args:
        plan: The run's plan.
        finished: Its finished cells with their stored JSON (:func:`finished_cells`).
        report: What the scheduler did.
        started: When the run started.
        face: What the command that ran it says of itself: ``out_dir``, ``suite``, ``argv``
            and ``executor`` (``{"kind", "jobs", "threads"}``).
        refused: The models the model contract refused.
        rows: The rows written to ``results.jsonl``: their record (``"results"``,
            :func:`robustbnn.results.catalogue.catalogue`) is what the reports accept.
    """
    cfg = plan.spec.cfg
    models, contract = _models(finished)
    for name, entry in models.items():  # for the reports' grouping only; no part of any key
        entry["family"] = MODELS.get(name).family if name in MODELS else "other"
    bundle = bench_data(plan.spec)
    data = {"name": bundle.name, "source": portable_text(bundle.source),
            "fingerprint": bundle.fingerprint,
            "sizes": [len(bundle.train), len(bundle.val), len(bundle.test)]}
    labels = {c.id: c.label for c in plan.cells}
    run = {
        "robustbnn": __version__, "git_sha": git_sha(), "torch": torch.__version__,
        "python": platform.python_version(), "device": plan.spec.device,
        "gpu": _device_name(plan.spec.device), "seed": cfg.seed, "suite": face["suite"],
        "config": dataclasses.asdict(cfg), "data": data,
        "models": models, "argv": face["argv"], "executor": face["executor"],
        "cells": {"total": len(plan.cells), "reused": len(report.reused),
                  "ran": len(report.ran),
                  "failed": {labels[i]: e for i, e in report.failed.items()},
                  "skipped": {labels[i]: e for i, e in report.skipped.items()}},
        "contract": contract, "refused": refused or {},
        RECORD: catalogue(rows or []),
        "started": started.isoformat(),
        "seconds": (dt.datetime.now(dt.UTC) - started).total_seconds(),
    }
    write_json(Path(face["out_dir"]) / "run.json", json.loads(json.dumps(run, default=str)))
