"""A run folder: robustbnn moves only its own files, never through a link; one run at a time;
reports of another run never land in a run folder."""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

import pytest
from filelock import FileLock

from robustbnn.report.render import MANIFEST, render
from robustbnn.results.paths import LinkedPathError
from robustbnn.results.store import RunFolderError
from robustbnn.run import ownership
from robustbnn.run.store import CellStore, RunFolderConflict
from tests.report._runs import rows, write_run

OLD, NEW = {"seed": 0}, {"seed": 2}


def _old_run(out: Path) -> None:
    """A finished run as bench leaves it: identity, a cell, results, scores, reports."""
    store = CellStore(out)
    store.claim(OLD)
    (store.dir / ("0" * 20 + ".json")).write_text("{}")
    (out / "results.csv").write_text("model\n")
    store.record(["scores/mlp/uniform.npz"])
    (out / "scores" / "mlp").mkdir(parents=True)
    (out / "scores" / "mlp" / "uniform.npz").write_bytes(b"x")
    (out / "figures").mkdir()
    (out / "figures" / "attack_mlp.png").write_bytes(b"png")
    (out / "leaderboard.md").write_text("# old\n")
    (out / MANIFEST).write_text(json.dumps({"files": ["leaderboard.md",
                                                      "figures/attack_mlp.png"]}))


def _tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_overwrite_moves_only_the_runs_own_files(tmp_path: Path,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    out = tmp_path / "ow1"
    (out / "scores" / "exam2025").mkdir(parents=True)
    (out / "scores" / "exam2025" / "grades.csv").write_text("alice,97\n")
    with pytest.raises(RunFolderConflict) as refused:
        CellStore(out).claim(OLD)
    assert str(refused.value) == (
        f"{out} holds files robustbnn did not write where a run writes its results "
        "(scores/exam2025/grades.csv); pass --out NEW_DIR, or --overwrite to write this run "
        "beside them (robustbnn replaces only its own files)")
    CellStore(out).claim(OLD, overwrite=True)
    _old_run(out)
    (out / "notes.md").write_text("mine\n")
    (out / "figures" / "mine.png").write_bytes(b"mine")
    with pytest.raises(RunFolderConflict, match="another run configuration"):
        CellStore(out).claim(NEW)
    with caplog.at_level(logging.WARNING):
        CellStore(out).claim(NEW, overwrite=True)
    assert _tree(out) == [".robustbnn-owned.json", "cells/identity.json", "cells/locks/run.lock",
                          "figures/mine.png", "notes.md", "scores/exam2025/grades.csv"]
    assert (out / "scores" / "exam2025" / "grades.csv").read_text() == "alice,97\n"
    assert json.loads((out / "cells" / "identity.json").read_text()) == NEW
    assert "kept the files robustbnn did not write: scores/exam2025/grades.csv" in caplog.text


def test_a_file_a_run_would_replace_is_refused_even_with_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "run.json").write_text('{"my": "notes"}')
    with pytest.raises(RunFolderConflict) as refused:
        CellStore(out).claim(NEW, overwrite=True)
    assert str(refused.value) == (
        f"{out / 'run.json'} was not written by robustbnn (no cells/identity.json records a "
        "run there) and this run would replace it; move it out of the folder, or pass --out "
        "NEW_DIR")
    assert (out / "run.json").read_text() == '{"my": "notes"}'


def test_a_linked_cells_folder_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "identity.json").write_text('{"seed":0}\n')
    (elsewhere / "thesis.tex").write_text("chapter 1\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "cells").symlink_to(elsewhere)
    with pytest.raises(LinkedPathError) as refused:
        CellStore(out).claim(NEW, overwrite=True)
    assert str(refused.value) == (
        f"{out / 'cells'} is a symbolic link (to {elsewhere}); robustbnn never writes or deletes "
        "through a link inside a run folder: replace the link with a real folder or file, or "
        "choose another --out")
    assert _tree(elsewhere) == ["identity.json", "thesis.tex"]


def test_an_interrupted_overwrite_never_leaves_a_new_identity_beside_old_reports(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    _old_run(out)
    calls = []
    rename = os.rename

    def killed_after_two(src: str, dst: str) -> None:
        calls.append(src)
        if len(calls) > 2:
            raise KeyboardInterrupt
        rename(src, dst)

    monkeypatch.setattr(ownership.os, "rename", killed_after_two)
    with pytest.raises(KeyboardInterrupt):
        CellStore(out).claim(NEW, overwrite=True)
    monkeypatch.undo()
    assert json.loads((out / "cells" / "identity.json").read_text()) == OLD  # still the old run
    with pytest.raises(RunFolderConflict, match="another run configuration"):
        CellStore(out).claim(NEW)
    CellStore(out).claim(NEW, overwrite=True)  # finishes the move
    assert _tree(out) == [".robustbnn-owned.json", "cells/identity.json", "cells/locks/run.lock"]
    assert not [p for p in out.iterdir() if p.name.startswith(".robustbnn-trash-")]


def test_a_second_run_on_the_folder_waits_for_the_first(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    out = tmp_path / "out"
    first = CellStore(out)
    first.claim(OLD)
    claimed = threading.Event()
    failure: list[BaseException] = []

    def second() -> None:
        try:
            with CellStore(out).hold():
                claimed.set()
        except BaseException as err:  # noqa: BLE001 - reported to the test thread
            failure.append(err)

    with caplog.at_level(logging.WARNING), first.hold():
        thread = threading.Thread(target=second)
        thread.start()
        assert not claimed.wait(0.5), "the second run did not wait for the run lock"
    thread.join(10)
    assert claimed.is_set() and not failure
    assert f"another robustbnn run is writing to {out}; waiting for it to finish" in caplog.text
    assert not FileLock(out / "cells" / "locks" / "run.lock").is_locked


def test_report_into_a_run_folder_of_another_seed_is_refused(tmp_path: Path) -> None:
    s0 = write_run(tmp_path / "s0", rows("a"), seed=0)
    s2 = write_run(tmp_path / "s2", rows("a", acc=0.5, seed=2), seed=2)
    with pytest.raises(RunFolderError) as refused:
        render([s2], s0, figures=False)
    assert str(refused.value) == (
        f"--out {s0} holds a run of its own (of another seed: 0, not 2), and its reports must "
        f"describe its results; render the reports of the run {s2} into another folder "
        "(--out NEW_DIR)")
    assert not (s0 / "leaderboard.md").exists()


def test_a_received_folder_with_linked_figures_writes_and_deletes_nothing_outside(
        tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "holiday.png").write_bytes(b"sea")
    recv = write_run(tmp_path / "recv", rows("a"))
    (recv / "figures").symlink_to(elsewhere)
    (recv / MANIFEST).write_text(json.dumps({"files": ["figures/holiday.png"]}))
    with pytest.raises(LinkedPathError) as refused:
        render([recv], recv)
    assert str(refused.value) == (
        f"{recv / 'figures'} is a symbolic link (to {elsewhere}); robustbnn never writes or "
        "deletes through a link inside a run folder: replace the link with a real folder or "
        "file, or choose another --out")
    assert _tree(elsewhere) == ["holiday.png"]
    assert not (recv / "leaderboard.md").exists()


def test_the_examples_a_run_wrote_are_its_own_and_nothing_outside_them(tmp_path: Path) -> None:
    folder = ownership.RunFolder(tmp_path)
    folder.record(["examples/mlp.npz", "examples/../run.json", "examples/a/b.npz",
                   "examples/notes.txt"])
    listed = folder.listed()
    assert "examples/mlp.npz" in listed
    assert not {"examples/../run.json", "examples/a/b.npz", "examples/notes.txt"} & listed


def test_a_cells_examples_stay_out_of_the_arrays_other_cells_read(tmp_path: Path) -> None:
    import numpy as np

    from robustbnn.run.cells import Cell, CellOutcome

    store = CellStore(tmp_path)
    cell = Cell("clean", "mlp", {"n": 2})
    arrays = {"bald": np.zeros(2), "ex/0123456789abcdef/accuracy": np.ones(2)}
    store.write(cell, CellOutcome(rows=[], arrays=arrays))
    assert list(store.arrays(cell.id)) == ["bald"]
    assert list(store.examples(cell.id)) == ["0123456789abcdef/accuracy"]
