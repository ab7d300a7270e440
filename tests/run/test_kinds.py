"""Closed sets are enums whose values are the strings of ids, JSON and results; one check."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from robustbnn.bench_config import BenchConfig, RobustnessKind
from robustbnn.cli import main
from robustbnn.errors import ConfigError
from robustbnn.results.names import SHIFT, SHIFTS, ShiftKind
from robustbnn.results.schema import Result, setting
from robustbnn.run.cells import Cell, CellKind, canonical_json
from robustbnn.run.tasks import TASKS


def test_cell_kinds_keep_the_ids_and_json_of_their_strings() -> None:
    params = {"S_attack": 1, "eps_grid": [0.1]}
    kind = Cell(CellKind.FGSM, "mlp", params, ("x",))
    text = Cell("fgsm", "mlp", params, ("x",))  # a cell written before the enum
    assert kind.id == text.id and kind.stream == text.stream
    stored = json.loads(json.dumps(kind.describe()))
    assert stored["task"] == "fgsm" and type(stored["task"]) is str
    assert f"{kind.task:<6}|" == "fgsm  |"  # --plan's column
    assert sorted(TASKS.names()) == sorted(k.value for k in CellKind)


def test_config_kinds_become_members_equal_to_their_strings() -> None:
    cfg = BenchConfig(models=("mlp",), robustness=("budget",), shift=("rotated",)).check()
    assert cfg.robustness == (RobustnessKind.BUDGET,) and cfg.shift == (ShiftKind.ROTATED,)
    assert all(type(k) is RobustnessKind for k in cfg.robustness)
    assert type(cfg.shift[0]) is ShiftKind
    plain = BenchConfig(models=("mlp",), robustness=("budget",), shift=("rotated",))
    assert canonical_json(dataclasses.asdict(cfg)) == canonical_json(dataclasses.asdict(plain))
    assert SHIFTS == (ShiftKind.ROTATED, ShiftKind.CORRUPTED)


@pytest.mark.parametrize(("changes", "message"), [
    ({"robustness": ("budget", "budgets")}, "unknown robustness cell kind(s) ['budgets']; "
     "known: ['budget', 'detector_aware', 'adversarial_ood']"),
    ({"shift": ("none",)}, "unknown shift kind(s) ['none']; known: ['rotated', 'corrupted']"),
    ({"shift": (ShiftKind.ROTATED, "rotated")}, "--shift names ['rotated'] more than once; "
     "name each once"),
])
def test_bad_kinds_are_one_line_errors(changes: dict, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        dataclasses.replace(BenchConfig(models=("mlp",)), **changes).check()
    assert str(err.value) == message


def test_a_shift_kind_round_trips_through_a_result_row() -> None:
    row = Result("mlp", 0, SHIFT, "toy", setting(shift=ShiftKind.CORRUPTED, n=5), "", "ece", 0.1)
    back = Result.from_json(json.loads(json.dumps(row.to_json())))
    assert back.setting == {"shift": "corrupted", "n": 5} and back == row


def test_bench_checks_its_config_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    calls = []
    check = BenchConfig.check
    monkeypatch.setattr(BenchConfig, "check", lambda self: calls.append(1) or check(self))
    out = str(tmp_path / "out")
    assert main(["bench", "--suite", "smoke", "--plan", "--out", out, "--no-cache"]) == 0
    assert " cells: 0 done, " in capsys.readouterr().out.splitlines()[-1]
    assert len(calls) == 1
