"""Results are read strictly (issue 49, item 4): a row of ``results.jsonl`` that the run did not
write (a setting the run has no cell of, a model that is not the run's, a metric robustbnn does
not know, another seed) is refused with the file and the line, as a duplicate already is, and
nothing is rendered; the rows a run wrote, plug-in measures and attacks included, still read."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from robustbnn.cli import main
from robustbnn.results.schema import Result, setting
from robustbnn.results.store import RESULTS, RunFolderError, read_results, write_json
from robustbnn.results.store import write_results as write_rows
from tests.plugins.fresh import fresh_plugins

PLUGINS = ("--plugin", "tests.run._measure_plugin", "--plugin", "tests.plugins.old_l2_pgd_plugin")


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One smoke run of mlp with a plug-in measure and a plug-in attack (read-only: copy it)."""
    root = tmp_path_factory.mktemp("strict")
    with fresh_plugins(*PLUGINS[1::2]):
        yield _bench(root)


def _bench(root: Path) -> Path:
    code = main(["bench", "--suite", "smoke", "--models", "mlp", "--attacks", "fgsm,old_pgd_l2",
                 "--robustness", "none", "--shift", "none", "--jobs", "1", "--threads", "1",
                 "--quiet", *PLUGINS,
                 "--cache-dir", str(root / "cache"), "--out", str(root / "run")])
    assert code == 0
    return root / "run"


def _copy(smoke_run: Path, tmp_path: Path) -> Path:
    run = tmp_path / "run"
    shutil.copytree(smoke_run, run)
    return run


def _first(run: Path, **where: object) -> tuple[int, dict]:
    """The first line of ``results.jsonl`` whose fields match ``where``, with its number."""
    for number, line in enumerate((run / RESULTS).read_text().splitlines(), start=1):
        row = json.loads(line)
        if all(row[k] == v for k, v in where.items()):
            return number, row
    raise AssertionError(f"no row with {where}")


def _append(run: Path, row: dict) -> int:
    """Append ``row`` to ``results.jsonl``; return its line number."""
    lines = (run / RESULTS).read_text().splitlines()
    (run / RESULTS).write_text("\n".join([*lines, json.dumps(row)]) + "\n")
    return len(lines) + 1


def _hint(run: Path) -> str:
    return f"rerun robustbnn bench (`robustbnn bench --out {run}`) to recreate it"


def _report_refuses(run: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """``robustbnn report RUN`` exits 1 with one line and leaves every report as it was."""
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    assert main(["report", str(run), "--no-figures"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before
    return err[0]


@pytest.mark.bench
def test_the_rows_a_run_wrote_read_plug_ins_included(smoke_run: Path, tmp_path: Path) -> None:
    run = _copy(smoke_run, tmp_path)
    frame = read_results(run, run=json.loads((run / "run.json").read_text()))
    assert "logit_spread" in set(frame["measure"]) and "old_pgd_l2" in set(frame["task"])
    assert main(["report", str(run), "--no-figures", "--quiet"]) == 0


@pytest.mark.bench
def test_a_row_of_a_setting_the_run_has_not_is_refused_with_file_and_line(
        smoke_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Before: the row was averaged in: mlp clean accuracy 0.6150 -> 0.8025, interval gone.
    run = _copy(smoke_run, tmp_path)
    _, clean = _first(run, task="clean", metric="accuracy")
    line = _append(run, {**clean, "setting": {"S_eval": 99}, "value": 0.99})
    assert _report_refuses(run, capsys) == (
        f"robustbnn: error: {run / RESULTS} line {line}: model 'mlp', seed 0, task 'clean', "
        "dataset 'mnist5k', setting S_eval=99: the run has no cell of task 'clean' with this "
        "setting (run.json lists S_eval=20); remove the line, or " + _hint(run))


@pytest.mark.bench
def test_a_row_of_a_model_the_run_has_not_is_refused(
        smoke_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Before: a ghost_model row added a row to the leaderboard.
    run = _copy(smoke_run, tmp_path)
    _, clean = _first(run, task="clean", metric="accuracy")
    line = _append(run, {**clean, "model": "ghost_model"})
    assert _report_refuses(run, capsys) == (
        f"robustbnn: error: {run / RESULTS} line {line}: model 'ghost_model', seed 0, task "
        "'clean', dataset 'mnist5k', setting S_eval=20: model 'ghost_model' is not a model of "
        "the run (run.json lists ['mlp']); remove the line, or " + _hint(run))


@pytest.mark.bench
def test_an_unknown_metric_is_refused(smoke_run: Path, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    run = _copy(smoke_run, tmp_path)
    _, clean = _first(run, task="clean", metric="accuracy")
    line = _append(run, {**clean, "metric": "happiness", "value": 1.0})
    error = _report_refuses(run, capsys)
    assert error.startswith(
        f"robustbnn: error: {run / RESULTS} line {line}: model 'mlp', seed 0, task 'clean', "
        "dataset 'mnist5k', setting S_eval=20: unknown metric 'happiness'; known: ['accuracy', ")
    assert error.endswith("]; remove the line, or " + _hint(run))


@pytest.mark.bench
@pytest.mark.parametrize(("field", "value", "problem"), [
    ("seed", 7, "seed 7 is not the run's seed 0 (run.json)"),
    ("dataset", "cifar10", "the run has no cell of task 'clean' on dataset 'cifar10' (run.json "
                           "lists 'mnist5k')"),
    ("measure", "bald", "the run has no cell of task 'clean' with measure 'bald' (run.json "
                        "lists '')"),
    ("task", "clean2", "the run has no cell of task 'clean2' (run.json lists"),
])
def test_a_row_of_another_seed_dataset_measure_or_task_is_refused(
        smoke_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str,
        value: object, problem: str) -> None:
    run = _copy(smoke_run, tmp_path)
    _, clean = _first(run, task="clean", metric="accuracy")
    line = _append(run, {**clean, field: value})
    error = _report_refuses(run, capsys)
    assert error.startswith(f"robustbnn: error: {run / RESULTS} line {line}: "), error
    assert f": {problem}" in error and error.endswith("; remove the line, or " + _hint(run))


def test_a_run_json_without_the_rows_record_still_checks_models_metrics_and_seed(
        tmp_path: Path) -> None:
    # A run of an earlier robustbnn: no "results" record in run.json; its model list, seed
    # and the metric names are still checked.
    rows = [Result("m", 0, "clean", "toy", setting(S_eval=4), "", "accuracy", 0.9)]
    run = tmp_path / "run"
    write_rows(run, [*rows, Result("ghost", 0, "clean", "toy", setting(S_eval=4), "",
                                   "accuracy", 0.9)])
    info = {"seed": 0, "suite": "test", "device": "cpu", "config": {"models": ["m"]}}
    write_json(run / "run.json", info)
    with pytest.raises(RunFolderError, match=r"line 2: .*model 'ghost' is not a model of the "
                                             r"run \(run\.json lists \['m'\]\)"):
        read_results(run, run=info)
    write_rows(run, rows)
    assert len(read_results(run, run=info)) == 1
