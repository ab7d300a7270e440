"""The attack, OOD-set, measure and suite examples of examples/, as a user runs them: the
examples README's commands are valid as written, and one bench run with all four plug-ins
scores each of them."""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import robustbnn.cli as cli
from robustbnn.attacks import ATTACKS
from robustbnn.data.ood_sets import OOD_DATASETS
from robustbnn.ood import UNCERTAINTIES
from robustbnn.suites import SUITES

ROOT = Path(__file__).resolve().parents[1]
MODULES = ("examples.l2_pgd_plugin", "examples.ood_set_plugin", "examples.measure_plugin",
           "examples.suite_plugin")


@pytest.fixture
def fresh_registries(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """What the examples register is dropped after the test."""
    for module in MODULES:
        monkeypatch.delitem(sys.modules, module, raising=False)
    monkeypatch.chdir(ROOT)  # --plugin examples.X finds the module in the current folder
    with ATTACKS.sandbox(), OOD_DATASETS.sandbox(), UNCERTAINTIES.sandbox(), SUITES.sandbox():
        yield


def _commands(readme: Path) -> list[list[str]]:
    """The `robustbnn bench` commands of a README's code blocks, as argument lists."""
    text = readme.read_text(encoding="utf-8")
    lines = re.findall(r"^robustbnn bench .*$", text, flags=re.M)
    return [shlex.split(line.split("#")[0])[1:] for line in lines]


@pytest.mark.bench
@pytest.mark.parametrize("readme", ["docs/models.md", "docs/attacks.md", "examples/README.md"])
def test_every_documented_example_command_plans(readme: str, fresh_registries: None,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Each example command (of the kinds this file covers) is valid as written, and names an
    --out of its own, so following them in order never meets another run's folder."""
    commands = [c for c in _commands(ROOT / readme)
                if any(m in c for m in MODULES) and "--plugin" in c]
    assert commands, f"{readme} shows no command of the examples"
    outs = [c[c.index("--out") + 1] for c in commands]
    assert len(set(outs)) == len(outs), f"{readme}: commands share an --out: {outs}"
    for command in commands:
        assert cli.main([*command, "--plan"]) == 0, command
        assert "cells:" in capsys.readouterr().out


def test_one_bench_scores_every_kind(fresh_registries: None, tmp_path: Path) -> None:
    """The suite example (which brings the OOD-set example) with the attack and measure
    examples: rows of the L2 attack, the inverted digits and DOCTOR, and an L2 legend."""
    out = tmp_path / "run"
    assert cli.main(["bench", "--quiet", "--plugin", "examples.suite_plugin",
                     "--plugin", "examples.l2_pgd_plugin", "--plugin", "examples.measure_plugin",
                     "--suite", "smoke_inverted", "--models", "mlp", "--attacks", "pgd_l2",
                     "--set", "pgd_l2.steps=2", "--set", "pgd_l2.eps=(1.0,)",
                     "--set", "pgd_l2.n_samples=(1,)",
                     "--cache-dir", str(tmp_path / "cache"), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    l2 = [r for r in rows if r["task"] == "pgd_l2" and r["metric"] == "accuracy"]
    assert [r["setting"]["eps"] for r in l2] == [1.0]
    doctor = {r["dataset"]: r["value"] for r in rows
              if r["measure"] == "doctor" and r["metric"] == "auroc"}
    assert set(doctor) == {"uniform", "inverted_digits"}
    assert all(0 <= v <= 1 for v in doctor.values())
    inverted = [r for r in rows if r["dataset"] == "inverted_digits" and r["task"] == "ood"]
    assert {r["measure"] for r in inverted} >= {"bald", "energy", "doctor"}
    legend = (out / "leaderboard.md").read_text()
    assert "L2 radius" in legend
