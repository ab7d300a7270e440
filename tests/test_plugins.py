"""Outside packages register models through an entry point or ``--plugin``."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pandas as pd
import pytest

import robustbnn.cli as cli
from robustbnn.models import MODELS


@pytest.fixture
def fresh_plugin(monkeypatch: pytest.MonkeyPatch):
    """Forget the plug-in between tests, so each test proves its own loading path."""
    monkeypatch.delitem(sys.modules, "tests.plugins.toy_plugin", raising=False)
    monkeypatch.setattr(MODELS, "_items", dict(MODELS._items))
    yield


def test_plugin_flag_registers_and_benches(fresh_plugin, tmp_path: Path) -> None:
    code = cli.main(["bench", "--suite", "smoke", "--quiet", "--plugin",
                     "tests.plugins.toy_plugin", "--models", "toy_ensemble,mlp",
                     "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache")])
    assert code == 0
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    assert "toy_ensemble" in set(results["model"])


def test_entry_point_group_is_loaded(fresh_plugin, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    ep = EntryPoint(name="toy", value="tests.plugins.toy_plugin", group=cli.ENTRY_POINT_GROUP)
    seen = []

    def fake_entry_points(*, group: str):
        seen.append(group)
        return [ep]

    monkeypatch.setattr(cli, "entry_points", fake_entry_points)
    assert "toy_ensemble" not in MODELS
    assert cli.main(["models"]) == 0
    assert seen == ["robustbnn.models"]
    names = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()]
    assert "toy_ensemble" in names


def test_unimportable_plugin_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["models", "--plugin", "no_such_module_xyz"]) == 2
    err = capsys.readouterr().err
    assert "--plugin no_such_module_xyz: cannot import it" in err


def test_readme_shows_the_tested_plugin() -> None:
    root = Path(__file__).resolve().parents[1]
    code = (root / "tests" / "plugins" / "toy_plugin.py").read_text().split('"""', 2)[2].strip()
    assert code in (root / "README.md").read_text()
    assert len([line for line in code.splitlines() if line.strip()]) <= 22


def test_a_plugin_module_in_the_current_folder_imports(tmp_path, monkeypatch) -> None:
    # The console script's sys.path lacks the current folder; --plugin finds it there, as
    # `python -m` would (README: examples/ from the repository root).
    (tmp_path / "_cwd_plugin_probe.py").write_text("LOADED = True\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "_cwd_plugin_probe", raising=False)
    cli.load_plugins(["_cwd_plugin_probe"])
    assert sys.modules["_cwd_plugin_probe"].LOADED
    assert sys.path[-1] == str(tmp_path)  # after the installed packages
