"""``robustbnn check`` checks the config a run uses (``--set``, ``--plugin`` as ``bench`` takes
them), and a run's contract refusal prints a ``check`` command that works as printed."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from robustbnn.cli import main
from robustbnn.models import MODELS

PLUGIN = "tests.plugins.toy_plugin"
BAD = "toy_ensemble.members=-3"  # no declared range: only building the model refuses it


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch):
    """The toy plug-in imported afresh by each command, its registration undone after."""
    monkeypatch.delitem(sys.modules, PLUGIN, raising=False)
    with MODELS.sandbox():
        yield


def _clause(out: str, model: str, clause: str) -> str:
    return next(line for line in out.splitlines() if line.split()[:2] == [model, clause])


def test_check_takes_set_and_checks_that_config(
        toy: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--plugin", PLUGIN, "toy_ensemble", "--set", BAD,
                 "--device", "cpu"]) == 1
    out = capsys.readouterr().out
    assert "FAILED: raised RuntimeError: Trying to create tensor with negative dimension -3" in (
        _clause(out, "toy_ensemble", "build"))
    assert out.splitlines()[-1].startswith("checked 1 model(s) on cpu: ")


def test_check_refuses_a_set_as_bench_does(toy: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "mlp", "--set", "mlp.hidden=(0,)"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("robustbnn: error: mlp.hidden=(0,) is out of range"), err
    assert main(["check", "mlp", "--set", "mc_dropout.epochs=2"]) == 2
    assert "model 'mc_dropout' is not checked here" in capsys.readouterr().err


@pytest.mark.bench
def test_a_refusal_prints_a_check_command_that_works_as_printed(
        toy: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--suite", "smoke", "--plugin", PLUGIN, "--models", "toy_ensemble",
                 "--set", BAD, "--robustness", "none", "--shift", "none", "--no-cache",
                 "--out", str(tmp_path / "run")]) == 1
    err = capsys.readouterr().err
    hint = re.search(r"fix it \(`(robustbnn check [^`]+)` runs every clause", err)
    assert hint, err
    assert hint[1] == f"robustbnn check --plugin {PLUGIN} toy_ensemble --set {BAD}"
    argv = shlex.split(hint[1])
    assert main(argv[1:]) == 1  # as printed: the plug-in loads, and the bad value fails again
    assert "FAILED" in _clause(capsys.readouterr().out, "toy_ensemble", "build")
