"""A failing cell is reported (retried only when a retry can fix it); every other cell is kept;
the exit is non-zero.
A run folder belongs to one configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from robustbnn.cli import main


def _smoke(out: Path, *extra: str) -> list[str]:
    return ["bench", "--suite", "smoke", "--no-cache", "--out", str(out), *extra]


@pytest.mark.bench
def test_failing_plugin_cell_is_reported_and_the_rest_kept(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = main(_smoke(out, "--models", "mlp,failing_model", "--plugin",
                       "tests.plugins.failing_plugin"))
    err = capsys.readouterr().err
    assert code == 1
    # Its brief fit in the model contract fails too, which leaves the verdict to its training
    # cell (the contract passes without one): that cell fails and is reported, not retried (a
    # plug-in's own error recurs).
    assert ("robustbnn: error: cell 'train failing_model' failed (RuntimeError: plug-in bug: "
            "loss not implemented); 18 cell(s) depending on it did not run; the 21 finished "
            "cell(s) are kept in") in err
    assert err.count("plug-in bug") == 1  # the summary only: no retry
    results = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert set(results["model"]) == {"mlp"} and len(results) > 100
    cells = json.loads((out / "run.json").read_text())["cells"]
    assert list(cells["failed"]) == ["train failing_model"]
    assert len(cells["skipped"]) == 18 and cells["ran"] == 21  # 2 contracts, mlp's 19 cells
    assert (out / "leaderboard.md").is_file()


@pytest.mark.bench
def test_a_second_configuration_is_refused_then_overwrites(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    args = _smoke(out, "--models", "mlp", "--attacks", "fgsm", "--quiet")
    assert main(args) == 0
    first = (out / "results.csv").read_bytes()
    assert main([*args, "--seed", "1"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds the results of another run configuration" in err[0]
    assert "--overwrite" in err[0]
    assert (out / "results.csv").read_bytes() == first  # nothing of the first run was lost
    assert main([*args, "--seed", "1", "--overwrite"]) == 0
    seeds = set(pd.read_csv(out / "results.csv")["seed"])
    assert seeds == {1}
    # identity.json and this run's contract, train, clean, 2 fgsm, 2 sanity and 3 OOD cells,
    # and its robustness cells: 2 budget, 1 detector-aware, 2 adversarial OOD, and its 2 shift
    # cells
    assert len(list((out / "cells").glob("*.json"))) == 1 + 1 + 9 + 5 + 2


def test_temporary_files_of_killed_writers_are_removed_and_live_ones_kept(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from robustbnn.results import store

    host = store._OWNER.rsplit("-", 1)[0]  # noqa: SLF001 - the naming this test pins
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (tmp_path / "cells").mkdir()
    stale = tmp_path / "cells" / f".abc.json.{host}-{dead}.x1y2.tmp"
    live = tmp_path / f".results.csv.{host}-{os.getpid()}.z9.tmp"
    other_host = tmp_path / f".results.csv.elsewhere-{dead}.q.tmp"
    for path in (stale, live, other_host):
        path.write_text("partial")
    assert store.remove_stale_temps(tmp_path) == 1
    assert not stale.exists() and live.exists() and other_host.exists()
    store.write_text_atomic(tmp_path / "x.txt", "ok")  # its temp name follows the pattern
    assert (tmp_path / "x.txt").read_text() == "ok" and not list(tmp_path.glob(".x.txt.*"))
