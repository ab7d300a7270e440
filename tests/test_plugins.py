"""Outside packages register models through an entry point or ``--plugin``."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pandas as pd
import pytest

import robustbnn.cli as cli
import robustbnn.plugins as plugins
from robustbnn.models import MODELS


@pytest.fixture
def fresh_plugin(monkeypatch: pytest.MonkeyPatch):
    """Forget the plug-in between tests, so each test proves its own loading path."""
    monkeypatch.delitem(sys.modules, "tests.plugins.toy_plugin", raising=False)
    with MODELS.sandbox():
        yield


@pytest.mark.bench
def test_plugin_flag_registers_and_benches(fresh_plugin, tmp_path: Path) -> None:
    code = cli.main(["bench", "--suite", "smoke", "--quiet", "--plugin",
                     "tests.plugins.toy_plugin", "--models", "toy_ensemble,mlp",
                     "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache")])
    assert code == 0
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    assert "toy_ensemble" in set(results["model"])


def test_entry_point_group_is_loaded(fresh_plugin, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    ep = EntryPoint(name="toy", value="tests.plugins.toy_plugin", group="robustbnn.models")
    seen = []

    def fake_entry_points(*, group: str):
        seen.append(group)
        return [ep] if group == ep.group else []

    monkeypatch.setattr(plugins, "entry_points", fake_entry_points)
    assert "toy_ensemble" not in MODELS
    assert cli.main(["models"]) == 0
    assert seen == ["robustbnn.models", "robustbnn.attacks", "robustbnn.ood_sets",
                    "robustbnn.measures", "robustbnn.suites"] == list(plugins.GROUPS)
    names = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()]
    assert "toy_ensemble" in names


def test_unimportable_plugin_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["models", "--plugin", "no_such_module_xyz"]) == 2
    err = capsys.readouterr().err
    assert "--plugin no_such_module_xyz: cannot import it" in err


def test_readme_shows_the_tested_plugin() -> None:
    root = Path(__file__).resolve().parents[1]
    code = (root / "tests" / "plugins" / "toy_plugin.py").read_text().split('"""', 2)[2].strip()
    assert code in (root / "docs" / "models.md").read_text()
    assert len([line for line in code.splitlines() if line.strip()]) <= 22


def test_a_plugin_module_in_the_current_folder_imports(tmp_path, monkeypatch) -> None:
    # The console script's sys.path lacks the current folder; --plugin finds it there, as
    # `python -m` would (README: examples/ from the repository root).
    (tmp_path / "_cwd_plugin_probe.py").write_text("LOADED = True\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "_cwd_plugin_probe", raising=False)
    plugins.load_plugins(["_cwd_plugin_probe"])
    assert sys.modules["_cwd_plugin_probe"].LOADED
    assert sys.path[-1] == str(tmp_path)  # after the installed packages


def test_the_thirdparty_package_registers_one_plugin_of_each_kind(thirdparty) -> None:  # noqa: ANN001
    from importlib.metadata import entry_points

    from tests.plugins._thirdparty import DIST, registries

    found = {group: [(ep.name, ep.dist.name) for ep in entry_points(group=group)]
             for group in plugins.GROUPS}
    names = [thirdparty.model, thirdparty.attack, thirdparty.ood_set, thirdparty.measure,
             thirdparty.suite]
    assert found == {group: [(name, DIST)]
                     for group, name in zip(plugins.GROUPS, names, strict=True)}
    pairs = list(zip(registries(), names, strict=True))
    assert not any(name in registry for registry, name in pairs)
    plugins.load_plugins()
    plugins.load_plugins()  # idempotent: nothing is registered twice
    assert all(name in registry for registry, name in pairs)
    assert str(thirdparty.folder) in plugins.plugin_paths()


def test_a_worker_elsewhere_loads_the_entry_points_from_the_carried_folders(
        thirdparty, tmp_path: Path) -> None:  # noqa: ANN001
    """A Ray worker may start in another folder, without the command's ``sys.path``: the spec
    carries the folders (``RunSpec.plugin_paths``) and ``setup_worker`` adds them."""
    import json
    import subprocess

    from tests.plugins._thirdparty import ROOT

    paths = plugins.plugin_paths()
    probe = ("import json, sys; from tests.plugins._thirdparty import worker_names; "
             "print(json.dumps([worker_names(()), worker_names(tuple(json.loads(sys.argv[1])))]))")
    env = {**thirdparty.env(), "PYTHONPATH": str(ROOT)}  # the checkout only
    done = subprocess.run([sys.executable, "-c", probe, json.dumps(paths)], env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    seen = dict(zip(((), paths), json.loads(done.stdout), strict=True))
    assert thirdparty.model not in seen[()]["model"]  # the folder is not there by itself
    assert thirdparty.model in seen[paths]["model"]
    assert thirdparty.attack in seen[paths]["attack"]
    assert thirdparty.ood_set in seen[paths]["OOD set"]
    assert thirdparty.measure in seen[paths]["uncertainty measure"]
    assert thirdparty.suite in seen[paths]["suite"]


def _broken_distribution(folder: Path, group: str, module: str) -> None:
    """An installed package ``broken-pkg`` 9.9 whose one entry point (in ``group``) raises."""
    (folder / f"{module}.py").write_text("raise RuntimeError('boom at import')\n")
    info = folder / "broken_pkg-9.9.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-pkg\nVersion: 9.9\n")
    (info / "entry_points.txt").write_text(f"[{group}]\nbroken = {module}\n")


@pytest.mark.parametrize("group", list(plugins.GROUPS))
def test_a_broken_entry_point_of_any_group_is_one_line_exit_2(
        group: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    module = f"broken_{group.split('.')[1]}_ep"
    _broken_distribution(tmp_path, group, module)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert cli.main(["models"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"robustbnn: error: {plugins.GROUPS[group]} plug-in entry point broken = "
                   f"{module} of package broken-pkg 9.9 (group {group}) cannot be imported "
                   "(RuntimeError: boom at import); fix or uninstall the package that declares "
                   "it (--debug shows the traceback)"]


@pytest.mark.bench
def test_a_worker_that_dies_names_the_cell_and_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delitem(sys.modules, "tests.plugins.dying_plugin", raising=False)
    with MODELS.sandbox():
        code = cli.main(["bench", "--suite", "smoke", "--models", "mlp,dying_model", "--jobs",
                         "2", "--plugin", "tests.plugins.dying_plugin", "--no-cache", "--attacks",
                         "fgsm", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 1
    assert ("robustbnn: error: cell 'train dying_model' failed (a worker process died while "
            "this cell of model dying_model ran or waited (BrokenProcessPool: ") in err
    assert "rerun with --jobs 1 to see the error in this process" in err


def test_a_failure_names_the_model_when_the_label_does_not() -> None:
    from concurrent.futures.process import BrokenProcessPool

    from robustbnn.run.cells import Cell
    from robustbnn.run.runner import failure_message

    cell = Cell("clean", "rank1_bnn", {}, label="clean S=20")
    assert failure_message(cell, ValueError("bad")) == "model rank1_bnn: ValueError: bad"
    labelled = Cell("train", "rank1_bnn", {}, label="train rank1_bnn")
    assert failure_message(labelled, ValueError("bad")) == "ValueError: bad"
    assert failure_message(cell, BrokenProcessPool("gone")).startswith(
        "a worker process died while this cell of model rank1_bnn ran or waited "
        "(BrokenProcessPool: gone);")


def test_an_exception_a_worker_cannot_pickle_comes_back_as_its_type_and_message() -> None:
    from robustbnn.run.runner import _sendable

    class PluginFault(Exception):  # a local class: pickle cannot find it by name
        pass

    sent = _sendable(PluginFault("plug-in bug"))
    assert type(sent) is RuntimeError and str(sent) == "PluginFault: plug-in bug"
    kept = ValueError("fine")
    assert _sendable(kept) is kept
