"""Cells are verified like cache entries: a missing, damaged or edited cell is recomputed with
one warning naming its file, and no planned cell is ever skipped at assembly."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from robustbnn.run import runner
from robustbnn.run.assemble import finished_cells
from robustbnn.run.cell_file import CellMissing
from robustbnn.run.cells import Cell, CellOutcome
from robustbnn.run.executors import LocalExecutor
from robustbnn.run.plan import Plan
from robustbnn.run.runner import RunReport, run_plan
from robustbnn.run.store import CellStore

CELL = Cell("clean", "mlp", {"n": 3}, label="clean mlp")
ROWS = [{"model": "mlp", "metric": "accuracy", "value": 0.615}]


def _stored(tmp_path: Path) -> CellStore:
    store = CellStore(tmp_path)
    store.write(CELL, CellOutcome(rows=ROWS, arrays={"max_prob": np.arange(3.0)}, seconds=1.0))
    return store


def test_a_cell_records_digests_and_keeps_its_id_and_rows(tmp_path: Path) -> None:
    store = _stored(tmp_path)
    payload = json.loads(store.json_path(CELL.id).read_text())
    assert CELL.id == "5d4687649c186ddeb79d"  # the id recipe is unchanged
    assert payload["rows"] == ROWS and payload["cell"]["id"] == CELL.id
    assert set(payload["digest"]) == {"payload", "npz"}
    assert store.done_ids() == {CELL.id}
    assert store.arrays(CELL.id)["max_prob"].tolist() == [0.0, 1.0, 2.0]


def _edit_value(path: Path) -> None:
    path.write_text(path.read_text().replace("0.615", "0.99"))


def _other_arrays(path: Path) -> None:
    np.savez_compressed(path, max_prob=np.zeros(3))


DAMAGE: dict[str, tuple[str, Callable[[Path], None], str]] = {
    "edited value": ("json", _edit_value, "its content does not match the sha256 it records"),
    "truncated json": ("json", lambda p: p.write_bytes(p.read_bytes()[:40]), "not JSON"),
    "garbage json": ("json", lambda p: p.write_bytes(b"\xff\xfe garbage"), "not JSON"),
    "deleted npz": ("npz", lambda p: p.unlink(), "is missing"),
    "truncated npz": ("npz", lambda p: p.write_bytes(p.read_bytes()[:30]), "its sha256 is not"),
    "edited npz": ("npz", _other_arrays, "its sha256 is not"),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_cell_is_not_done_and_named_once(
        tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture) -> None:
    store = _stored(tmp_path)
    suffix, edit, why = DAMAGE[damage]
    path = tmp_path / "cells" / f"{CELL.id}.{suffix}"
    edit(path)
    with caplog.at_level(logging.WARNING):
        assert store.done_ids(warn=True) == set()
        assert store.done_ids(warn=True) == set()
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1 and warnings[0].startswith(str(path)), warnings
    assert why in warnings[0] and warnings[0].endswith("; recomputing that cell")
    with pytest.raises(CellMissing, match=str(path)):
        store.arrays(CELL.id)


def test_a_cell_stored_before_digests_is_kept_unless_its_arrays_do_not_load(
        tmp_path: Path) -> None:
    store = _stored(tmp_path)
    path = store.json_path(CELL.id)
    payload = json.loads(path.read_text())
    del payload["digest"]
    path.write_text(json.dumps(payload))
    assert store.done_ids() == {CELL.id}  # no recomputation of every existing cell
    store.npz_path(CELL.id).write_bytes(b"PK\x03\x04 not a zip")
    assert store.done_ids() == set()


def _toy_plan(cells: list[Cell]) -> Plan:
    spec = SimpleNamespace(threads=None, plugins=(), plugin_paths=(), device="cpu")
    return Plan(spec=spec, cells=tuple(cells), identity={})  # type: ignore[arg-type]


@pytest.fixture
def toy_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three task kinds: ``make`` stores arrays, ``use`` reads its dependency's (as an OOD cell
    reads the clean scores), ``wipe`` deletes a finished cell's file during the run."""

    def context(job: runner.Job, store: CellStore) -> SimpleNamespace:
        return SimpleNamespace(cell=job.cell, deps=job.deps, store=store)

    def make(ctx: SimpleNamespace) -> CellOutcome:
        return CellOutcome(rows=[{"made": 1}], arrays={"x": np.arange(3.0)})

    def use(ctx: SimpleNamespace) -> CellOutcome:
        arrays = ctx.store.arrays(ctx.deps[0].id)
        first = next(iter(arrays.values()))  # StopIteration when a lost file reads as empty
        return CellOutcome(rows=[{"sum": float(first.sum())}])

    def wipe(ctx: SimpleNamespace) -> CellOutcome:
        (ctx.store.dir / ctx.cell.params["file"]).unlink()
        return CellOutcome()

    tasks = {"make": make, "use": use, "wipe": wipe}
    monkeypatch.setattr(runner, "_context", context)
    monkeypatch.setattr(runner, "TASKS", SimpleNamespace(get=tasks.__getitem__))


@pytest.mark.parametrize("lost", ["npz", "json"])
def test_a_cell_deleted_during_the_run_is_recomputed(
        tmp_path: Path, lost: str, toy_tasks: None, caplog: pytest.LogCaptureFixture) -> None:
    made = Cell("make", "m", {}, label="make m")
    used = Cell("use", "m", {}, deps=(made.id,), label="use m")
    wipe = Cell("wipe", "m", {"file": f"{made.id}.{lost}"}, label="wipe m")
    # npz: lost before ``use`` reads it; json: lost after every cell finished
    order = [made, wipe, used] if lost == "npz" else [made, used, wipe]
    store = CellStore(tmp_path)
    with caplog.at_level(logging.WARNING):
        report = run_plan(_toy_plan(order), LocalExecutor(), store, retries=0)
    assert report.failed == {} and report.skipped == {}
    assert sorted(report.ran) == sorted(c.id for c in order)
    assert store.done_ids() == {c.id for c in order}
    assert store.read(used.id)["rows"] == [{"sum": 3.0}]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and str(tmp_path / "cells" / f"{made.id}.{lost}") in warnings[0]
    assert warnings[0].endswith("; recomputing that cell (make m)")


def test_assembly_fails_naming_a_finished_cell_that_is_gone(tmp_path: Path) -> None:
    store = _stored(tmp_path)
    store.json_path(CELL.id).unlink()
    report = RunReport(ran=[CELL.id])
    with pytest.raises(CellMissing) as missing:
        finished_cells(_toy_plan([CELL]), store, report)
    assert str(missing.value) == (f"{store.json_path(CELL.id)} is missing (deleted during the "
                                  "run?)")
