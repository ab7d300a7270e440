"""Refusals of issue 43 item 5: a run refused for ``--executor ray`` without Ray writes
nothing in its ``--out``; ``--set`` help names attack settings too."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

from robustbnn.cli import main
from robustbnn.cli.parser import build_parser


def test_a_ray_run_without_ray_is_refused_before_it_claims_its_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed: `import ray` fails
    out = tmp_path / "run"
    assert main(["bench", "--suite", "smoke", "--executor", "ray", "--no-cache",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["robustbnn: error: --executor ray needs Ray: pip install 'robustbnn[ray]'"]
    assert not out.exists() or sorted(out.rglob("*")) == []  # nothing claims the folder


def test_set_help_says_it_takes_attack_settings_too() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for command in ("bench", "check"):
        option = next(a for a in sub.choices[command]._actions if "--set" in a.option_strings)
        assert "attack" in option.help and "model" in option.help, (command, option.help)
