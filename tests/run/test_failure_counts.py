"""The failure summary counts, for each failed cell, the cells that waited for it (issue 28,
defect 14), not every skipped cell of the run."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from robustbnn.cli.bench import failure_summary
from robustbnn.run.cells import Cell
from robustbnn.run.runner import RunReport


def test_each_failed_cell_counts_only_its_own_dependents() -> None:
    a, b = Cell("train", "a", {}, label="train a"), Cell("train", "b", {}, label="train b")
    clean_a = Cell("clean", "a", {}, deps=(a.id,), label="clean a")
    fgsm_a = Cell("fgsm", "a", {}, deps=(a.id, clean_a.id), label="fgsm a")  # through clean
    clean_b = Cell("clean", "b", {}, deps=(b.id,), label="clean b")
    done = Cell("clean", "c", {}, label="clean c")
    cells = {c.id: c for c in (a, b, clean_a, fgsm_a, clean_b, done)}
    report = RunReport(ran=[done.id], failed={a.id: "RuntimeError: x", b.id: "RuntimeError: y"},
                       skipped={c.id: "depends" for c in (clean_a, fgsm_a, clean_b)})
    outcome = SimpleNamespace(report=report, refused={},
                              plan=SimpleNamespace(by_id=lambda: cells))
    tail = ("the 1 finished cell(s) are kept in out/cells/, so rerunning the same command "
            "retries only what did not finish\n")
    assert failure_summary(outcome, Path("out")) == (
        "robustbnn: error: cell 'train a' failed (RuntimeError: x); 2 cell(s) depending on it "
        f"did not run; {tail}"
        "robustbnn: error: cell 'train b' failed (RuntimeError: y); 1 cell(s) depending on it "
        f"did not run; {tail}")
