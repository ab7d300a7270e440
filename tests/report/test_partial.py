"""The leaderboard of a partial run says so at its top, naming the failed cells."""

from __future__ import annotations

import json
from pathlib import Path

from robustbnn.report.render import render
from robustbnn.results.store import write_json

from ._runs import rows, write_run

CELLS = {"failed": {"train bbb": "RuntimeError: plug-in bug: loss not implemented"},
         "skipped": {"clean bbb": "depends on 0123, which did not finish", "ood bbb": "..."}}


def _partial_run(folder: Path) -> Path:
    run = write_run(folder, rows("a"))
    meta = json.loads((run / "run.json").read_text())
    write_json(run / "run.json", {**meta, "cells": {"total": 9, "reused": 0, "ran": 6, **CELLS}})
    return run


def test_a_partial_run_names_its_failed_cells_at_the_top(tmp_path: Path) -> None:
    run = _partial_run(tmp_path / "run")
    render([run], run, figures=False)
    md = (run / "leaderboard.md").read_text().split("\n")
    assert md[0] == "# robustbnn leaderboard" and md[1] == ""
    assert md[2] == (
        "**Partial run: 1 cell(s) failed, so numbers are missing below: train bbb "
        "(RuntimeError: plug-in bug: loss not implemented); 2 cell(s) depending on it did not "
        "run. Rerunning the same `robustbnn bench` command retries only what did not finish, "
        "and `run.json` holds every error.**")
    board = json.loads((run / "leaderboard.json").read_text())
    assert board["partial"] == {"failed": [{"cell": "train bbb", "error": CELLS["failed"][
        "train bbb"]}], "skipped": 2}
    page = (run / "leaderboard.html").read_text()
    assert '</h1>\n<p class="partial"><strong>Partial run: 1 cell(s) failed' in page


def test_a_complete_run_has_no_notice(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", rows("a"))
    render([run], run, figures=False)
    assert "Partial run" not in (run / "leaderboard.md").read_text()
    assert "partial" not in json.loads((run / "leaderboard.json").read_text())
