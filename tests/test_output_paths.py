"""Every output path is checked the same way for ``bench``, ``report`` and ``reproduce``
(issue 49, item 6): not the file system's root, not inside the model cache or the data root,
not inside a run folder (its ``cells/``, ``scores/`` or any other part), never empty; and
``--dataset ''`` is refused instead of meaning the suite's dataset. Each refusal is one line
naming the flag, the folder and the way out, exit code 2, with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import robustbnn.bench
import robustbnn.report.render
from robustbnn.cli import main
from tests.report._runs import rows, write_run


class _Ran(Exception):
    """The command got past its checks (a stub of the work raised this)."""


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing past the checks runs: a command that gets there raises :class:`_Ran`."""
    def ran(*args: object, **kwargs: object) -> None:
        raise _Ran

    monkeypatch.setattr(robustbnn.bench, "run_bench", ran)
    monkeypatch.setattr(robustbnn.report.render, "render", ran)


def _a_run(folder: Path) -> Path:
    """A run folder as `robustbnn bench` leaves it: results, run.json and cells/identity.json."""
    write_run(folder, rows("m"))
    (folder / "cells").mkdir()
    (folder / "cells" / "identity.json").write_text(json.dumps({"identity": "x" * 64}) + "\n")
    return folder


def _listing(root: Path) -> set[Path]:
    return set(root.rglob("*"))


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, f"expected one error line, got {err}"
    return err[0]


def _bench(tmp_path: Path, out: str) -> list[str]:
    return ["bench", "--suite", "smoke", "--models", "mlp", "--quiet",
            "--cache-dir", str(tmp_path / "cache"), "--out", out]


@pytest.mark.parametrize("part", ["cells", "scores", "examples", "figures", "notes/sub"])
@pytest.mark.usefixtures("no_work")
def test_an_output_inside_a_run_folder_is_refused_by_bench_and_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], part: str) -> None:
    # Before: `bench --out RUN/scores` nested a run in RUN (which then refused to rerun) and
    # `report RUN --out OTHER/cells` wrote its reports into another run's cells/.
    other = _a_run(tmp_path / "other")
    run = write_run(tmp_path / "run", rows("m"))
    out = other / part
    before = _listing(tmp_path)
    where = (f"is inside the cells/ folder of the run {other}, whose stored cells it would "
             "mix with its own" if part == "cells" else
             f"is inside the run folder {other} (it holds cells/identity.json), whose files "
             "it would mix with its own")
    for command in (_bench(tmp_path, str(out)), ["report", str(run), "--out", str(out)]):
        assert main(command) == 2
        assert _error_line(capsys) == (f"robustbnn: error: --out {out} {where}; choose a "
                                       "folder outside it")
        assert _listing(tmp_path) == before


@pytest.mark.usefixtures("no_work")
def test_the_root_of_the_file_system_is_refused_by_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = write_run(tmp_path / "run", rows("m"))
    assert main(["report", str(run), "--out", "/"]) == 2
    assert _error_line(capsys) == ("robustbnn: error: --out / is the root of the file system; "
                                   "choose a folder of its own, like reports/latest")


@pytest.mark.usefixtures("no_work")
def test_report_into_the_model_cache_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROBUSTBNN_CACHE", str(tmp_path / "cache"))
    run = write_run(tmp_path / "run", rows("m"))
    out = tmp_path / "cache" / "reports"
    assert main(["report", str(run), "--out", str(out)]) == 2
    assert _error_line(capsys) == (
        f"robustbnn: error: --out {out} is inside the model cache {tmp_path / 'cache'} "
        "($ROBUSTBNN_CACHE); choose a folder outside it")
    assert not out.exists()


@pytest.mark.usefixtures("no_work")
def test_a_folder_beside_a_run_without_cells_stays_allowed(tmp_path: Path) -> None:
    # The committed reports/ is a run with no cells/ (results, run.json, its record), and
    # reports/latest, reports/reproductions are the default outputs: they stay allowed.
    reports = write_run(tmp_path / "reports", rows("m"))
    (reports / ".robustbnn-owned.json").write_text(json.dumps({"files": ["run.json"]}))
    with pytest.raises(_Ran):
        main(_bench(tmp_path, str(reports / "latest")))
    with pytest.raises(_Ran):
        main(["report", str(reports), "--out", str(reports / "default")])
    with pytest.raises(_Ran):  # the run folder itself: a rerun, a re-render
        main(["report", str(reports)])


@pytest.mark.usefixtures("no_work")
def test_the_scores_of_a_run_without_cells_are_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reports = write_run(tmp_path / "reports", rows("m"))
    out = reports / "scores" / "x"
    assert main(_bench(tmp_path, str(out))) == 2
    assert _error_line(capsys) == (
        f"robustbnn: error: --out {out} is inside {reports / 'scores'}, a folder of the run "
        f"{reports}, whose files it would mix with its own; choose a folder outside it")


@pytest.mark.parametrize(("command", "flag"), [
    (["bench", "--suite", "smoke", "--out", ""], "--out"),
    (["bench", "--suite", "smoke", "--out", " "], "--out"),
    (["report", "RUN", "--out", ""], "--out"),
    (["report", ""], "RUN_DIR"),
    (["reproduce", "bbb_table1", "--out", ""], "--out"),
    (["reproduce", "bbb_table1", "--runs-dir", ""], "--runs-dir"),
])
def test_an_empty_folder_is_refused_by_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        command: list[str], flag: str) -> None:
    # Before: `bench --out ''` wrote the run into the working folder.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(command)
    assert exit_.value.code == 2
    line = _error_line(capsys)
    value = command[command.index(flag) + 1] if flag != "RUN_DIR" else ""
    assert line.startswith(f"robustbnn: error: argument {flag}: expected a folder, got "
                           f"{value!r}; omit the flag to get the default"), line
    assert list(tmp_path.iterdir()) == []


def test_an_empty_dataset_is_refused_by_name(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: `--dataset ''` silently meant the suite's dataset (mnist5k).
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(["bench", "--suite", "smoke", "--dataset", "", "--print-config"])
    assert exit_.value.code == 2
    assert _error_line(capsys) == (
        "robustbnn: error: argument --dataset: expected a dataset name, got ''; omit the flag "
        "to get the suite's (see `robustbnn datasets`); see robustbnn bench --help")
    assert list(tmp_path.iterdir()) == []
