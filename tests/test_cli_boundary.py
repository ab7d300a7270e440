"""The CLI boundary: every bad value is one line naming the problem and the fix, exit code 2,
before any work starts; failures while working stay exit code 1."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from robustbnn.cli import main
from robustbnn.models import MODELS
from robustbnn.results.schema import Result, setting
from robustbnn.results.store import write_json, write_results


def _smoke(tmp_path: Path, *extra: str) -> list[str]:
    return ["bench", "--suite", "smoke", "--quiet", "--out", str(tmp_path / "out"),
            "--cache-dir", str(tmp_path / "cache"), *extra]


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, f"expected one error line, got {err}"
    assert err[0].startswith("robustbnn: error: ") and "Traceback" not in err[0]
    return err[0]


@pytest.mark.parametrize(("extra", "words"), [
    (["--seed", "-1"], ["--seed -1 is out of range", "[0, 4294967295]"]),
    (["--seed", "4294967296"], ["--seed 4294967296 is out of range"]),
    (["--seed", "-1", "--print-config"], ["--seed -1"]),
    (["--set", "mlp.epochs=0"], ["mlp.epochs=0", "in [1, 10000]"]),
    (["--set", "mc_dropout.val_samples=0"], ["mc_dropout.val_samples=0", ">= 1"]),
    (["--set", "mlp.batch_size=0"], ["mlp.batch_size=0"]),
    (["--set", "mlp.lr=-1"], ["mlp.lr=-1", "> 0"]),
    (["--set", "mlp.hidden=(0,)"], ["mlp.hidden=(0,)"]),
    (["--set", "mc_dropout.p=1.5"], ["mc_dropout.p=1.5", "[0, 1)"]),
    (["--set", "mlp.epochs=ten"], ["mlp.epochs: expected int"]),
    (["--set", "*.foo=1"], ["*.foo", "no model of this run has a setting 'foo'"]),
    (["--set", "mlp.epochs"], ["not of the form name.field=value"]),
    (["--models", "mlp,mlp"], ["--models names ['mlp'] more than once"]),
    (["--models", "nope"], ["unknown model 'nope'"]),
    (["--attacks", "fgsm,nope"], ["unknown attack 'nope'"]),
    (["--ood", "uniform,nope"], ["unknown OOD set 'nope'"]),
    (["--targeted-samples", "1", "--memory-mb", "1", "--suite", "nope"],
     ["unknown suite 'nope'"]),
    (["--data-root", "/no/such/folder"], ["--data-root /no/such/folder does not exist"]),
])
def test_bad_values_are_one_line_exit_2_before_any_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str],
        words: list[str]) -> None:
    assert main(_smoke(tmp_path, *extra)) == 2
    line = _error_line(capsys)
    assert all(w in line for w in words), line
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


def test_argparse_values_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        main(["bench", "--seed", "zero"])
    assert err.value.code == 2


@pytest.mark.parametrize("flag", ["--out", "--cache-dir"])
def test_an_output_folder_that_is_a_file_is_refused_before_training(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    args = ["bench", "--suite", "smoke", "--quiet", "--models", "mlp",
            "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache")]
    args[args.index(flag) + 1] = str(blocker / "sub")
    assert main(args) == 2
    line = _error_line(capsys)
    assert f"{flag} {blocker / 'sub'} is inside the file {blocker}" in line
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out").exists()


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0,
                    reason="root writes anywhere")
def test_a_read_only_output_folder_is_refused(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        assert main(_smoke(tmp_path, "--out", str(locked / "run"))) == 2
        assert "cannot write in" in _error_line(capsys)
    finally:
        locked.chmod(0o755)


def test_an_os_error_while_working_is_one_line_exit_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import robustbnn.bench

    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device", str(tmp_path / "out" / "x"))

    monkeypatch.setattr(robustbnn.bench, "run_bench", full_disk)
    assert main(_smoke(tmp_path, "--models", "mlp")) == 1
    line = _error_line(capsys)
    assert "No space left on device" in line and "free space" in line


@pytest.mark.parametrize(("source", "words"), [
    ("raise RuntimeError('boom at import')", ["RuntimeError: boom at import"]),
    ("def broken(:\n    pass", ["SyntaxError"]),
    ("from robustbnn.models import MODELS\nMODELS.register('mlp', object())",
     ["ValueError: model 'mlp' is already registered"]),
])
def test_a_plugin_that_fails_on_import_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        source: str, words: list[str]) -> None:
    name = f"broken_plugin_{abs(hash(source))}"
    (tmp_path / f"{name}.py").write_text(source + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    names = MODELS.names()
    assert main(["models", "--plugin", name]) == 2
    line = _error_line(capsys)
    assert f"--plugin {name}: importing it raised" in line and all(w in line for w in words)
    assert MODELS.names() == names


def test_check_exits_2_for_a_bad_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "no_such_model"]) == 2
    assert "unknown model 'no_such_model'" in _error_line(capsys)


def _run_folder(tmp_path: Path, model: str = "m", seed: object = 0,
                run: object = None) -> Path:
    folder = tmp_path / "run"
    rows = [Result(model, 0, "clean", "toy", setting(S_eval=10), "", "accuracy", 0.9)]
    write_results(folder, rows)
    if seed != 0:
        line = json.loads((folder / "results.jsonl").read_text())
        (folder / "results.jsonl").write_text(json.dumps({**line, "seed": seed}) + "\n")
    write_json(folder / "run.json", {"seed": 0, "suite": "test", "device": "cpu",
                                     "config": {"ood_preprocessing": "unit"}})
    if run is not None:
        (folder / "run.json").write_text(json.dumps(run))
    return folder


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"seed": "zero"}, ["field 'seed' must be an integer, got 'zero'"]),
    ({"run": []}, ["run.json is corrupt", "expected a JSON object, got list"]),
    ({"run": {"seed": "zero"}}, ["run.json is corrupt", "'seed' must be a JSON integer"]),
    ({"run": {"config": [1]}}, ["'config' must be a JSON dict"]),
])
def test_report_on_bad_files_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         kwargs: dict, words: list[str]) -> None:
    folder = _run_folder(tmp_path, **kwargs)
    assert main(["report", str(folder), "--no-figures"]) == 1
    line = _error_line(capsys)
    assert all(w in line for w in words), line


@pytest.mark.bench
def test_names_from_data_are_escaped_and_never_math_text(tmp_path: Path) -> None:
    from tests.report._runs import rows, write_run

    for i, name in enumerate(("$\\foo$", "<img src=x onerror=alert(1)>")):
        folder = write_run(tmp_path / str(i), rows(name) + rows("mlp"))
        assert main(["report", str(folder), "--quiet"]) == 0  # figures name it: no TeX
        assert len(list((folder / "figures").glob("*.png"))) >= 3
        md = (folder / "leaderboard.md").read_text()
        html = (folder / "leaderboard.html").read_text()
        assert "<img" not in md and "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in md


@pytest.mark.parametrize(("source", "words"), [
    ("raise RuntimeError('boom at import')", ["RuntimeError: boom at import"]),
    ("def broken(:\n    pass", ["SyntaxError"]),
    ("import no_such_dependency_xyz", ["ModuleNotFoundError", "no_such_dependency_xyz"]),
])
def test_an_entry_point_that_fails_on_import_is_one_line_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        source: str, words: list[str]) -> None:
    """An installed plug-in that breaks stops the run: skipping it would shrink the default
    suite's leaderboard (every registered model) without a word."""
    from importlib.metadata import EntryPoint

    import robustbnn.plugins as plugins

    name = f"broken_ep_{abs(hash(source))}"
    (tmp_path / f"{name}.py").write_text(source + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ep = EntryPoint(name="broken", value=name, group="robustbnn.models")
    monkeypatch.setattr(plugins, "entry_points",
                        lambda *, group: [ep] if group == ep.group else [])
    names = MODELS.names()
    assert main(["bench", "--suite", "smoke", "--models", "mlp", "--out",
                 str(tmp_path / "out")]) == 2
    line = _error_line(capsys)
    assert line.startswith(f"robustbnn: error: model plug-in entry point broken = {name} (group "
                           "robustbnn.models) cannot be imported (")
    assert all(w in line for w in words) and "fix or uninstall the package" in line
    assert MODELS.names() == names
    assert not (tmp_path / "out").exists()  # nothing ran
