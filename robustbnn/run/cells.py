"""A cell: one training or one evaluation task, identified by a hash of everything it depends on.

A training cell is (model, full config, data fingerprint, seed); an evaluation cell is one task
on one trained model. ``Cell.id`` hashes a canonical JSON of the task, the model, the settings,
the ids of the cells it depends on (so a trained model's config and data reach every cell
downstream of it) and :data:`CELL_FORMAT`. Random streams derive from the id, so the order in
which cells run, the executor and interruptions never change a number (STYLE.md §10).

Content and streams. A cell that reads files whose name does not pin their content (an OOD
set: a ``folder:PATH`` set, or a registered set whose files were replaced) carries their
sha256 digests in ``Cell.content``. The digests enter ``Cell.id`` (when there are any), so
new content means a new id and the cell is recomputed, but not ``Cell.stream``, the id
computed without them, from which the cell's random streams derive: a cell of unchanged
params draws the same numbers whatever its content digests, and a cell without any keeps
its old id.

Two versions, kept apart so that a new output does not reshuffle old numbers:
:data:`CELL_FORMAT` is the id recipe's (bumping it changes every id, so every random stream),
:data:`OUTPUT_FORMAT` is that of what task code writes into a stored cell. A stored cell of
another output format is recomputed under the same id and streams, so the numbers a change
did not touch come out the same.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
from typing import Any

import numpy as np

__all__ = ["CELL_FORMAT", "OUTPUT_FORMAT", "Cell", "CellKind", "CellOutcome", "canonical_json"]

CELL_FORMAT = 1  # the id recipe: bump only to reshuffle every id and stream on purpose
# Bump when a task's code changes what a stored cell holds (its rows, arrays or info).
# 2: clean cells write the Brier score and the reliability diagram.
# 3: clean, indist, ood and heldout cells add the logit measures (energy, max_logit, mean_*);
#    plug-in measures leave them for cells of their own (task ``measure``).
# 4: rows computed from test examples keep them (robustbnn.results.examples): the intervals.
OUTPUT_FORMAT = 4


class CellKind(enum.StrEnum):
    """The kinds of cell: one task each (:data:`robustbnn.run.tasks.TASKS`). A kind's value
    is the ``task`` of the cell's id and stored JSON, so it never changes."""

    CONTRACT = "contract"  # the cheap clauses of the model contract, before a model's cells
    TRAIN = "train"
    CLEAN = "clean"
    FGSM = "fgsm"
    SANITY = "sanity"  # the Carlini checks of FGSM
    TARGETED = "targeted"
    ATTACK = "attack"  # any registered attack but FGSM and the targeted one, PGD-EOT style
    INDIST = "indist"  # the in-distribution scores of another split than test
    OOD = "ood"
    MEASURE = "measure"  # a plug-in uncertainty measure on one OOD set
    HELDOUT = "heldout"
    BUDGET = "budget"
    DETECTOR_AWARE = "detector_aware"
    ADV_OOD = "adv_ood"
    SHIFT = "shift"
    FIDELITY = "fidelity"  # the MC predictive against the fidelity reference's (docs/fidelity.md)


def canonical_json(payload: Any) -> str:
    """Key-sorted, compact JSON: the same text for the same content, whatever the dict order."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)


@dataclasses.dataclass(frozen=True)
class Cell:
    """One unit of work of a run.

    Attributes:
        task: The cell's kind (its task in :data:`robustbnn.run.tasks.TASKS`).
        model: The model's registry name.
        params: The task's settings, JSON data (numbers, strings, booleans, lists, dicts).
        deps: Ids of the cells this one reads (its training cell, the clean scores).
        label: A short human-readable name for progress and ``--plan`` (not in the id).
        content: sha256 digests of the inputs the cell reads by content (``{"ood": ...}``):
            in the id when non-empty, never in the random streams (:attr:`stream`).
        after: Ids of cells that must finish first although this one reads nothing of
            theirs (its model's ``contract`` cell): the scheduler waits for them and skips
            this cell when one fails, as for ``deps``, but they are not in the id, so adding
            such a gate changes no id and no random stream.
    """

    task: CellKind
    model: str
    params: dict[str, Any]
    deps: tuple[str, ...] = ()
    label: str = ""
    content: dict[str, str] = dataclasses.field(default_factory=dict)
    after: tuple[str, ...] = ()

    def _hash(self, content: dict[str, str]) -> str:
        payload = {"format": CELL_FORMAT, "task": self.task, "model": self.model,
                   "params": self.params, "deps": list(self.deps)}
        if content:
            payload["content"] = content
        return hashlib.sha256(canonical_json(payload).encode()).hexdigest()[:20]

    @property
    def id(self) -> str:
        """A 20-hex-digit hash of task, model, params, dependencies, content digests (when
        any) and the cell format."""
        return self._hash(self.content)

    @property
    def stream(self) -> str:
        """The seed of the cell's random streams: the id without the content digests."""
        return self._hash({})

    def describe(self) -> dict[str, Any]:
        """The cell as JSON data (stored beside its rows)."""
        out = {"id": self.id, "task": self.task, "model": self.model, "label": self.label,
               "params": self.params, "deps": list(self.deps)}
        if self.content:
            out["content"] = self.content
        return out


@dataclasses.dataclass
class CellOutcome:
    """What a finished cell produced.

    Attributes:
        rows: Tidy result rows as JSON dicts (``Result.to_json()``).
        arrays: Named per-example arrays other cells or reports read (e.g. clean scores).
        info: Typed facts about the work as JSON data (a training cell's fit report).
        seconds: Wall time of the cell.
    """

    rows: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    arrays: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    info: dict[str, Any] = dataclasses.field(default_factory=dict)
    seconds: float = 0.0
