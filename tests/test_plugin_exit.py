"""A plug-in that calls sys.exit or raises KeyboardInterrupt at import is a plug-in error
(issue 28, defect 14): one line naming the module, exit 2, not robustbnn ending silently
with the plug-in's exit code."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from robustbnn import plugins
from robustbnn.cli import main


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """Write a plug-in module ``name`` with ``body`` on sys.path; return its name."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(name: str, body: str) -> str:
        (tmp_path / f"{name}.py").write_text(body)
        monkeypatch.delitem(sys.modules, name, raising=False)
        return name

    return write


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_sys_exit_at_import_is_a_plugin_error(module, capsys) -> None:  # noqa: ANN001
    name = module("exits_three", "import sys\nsys.exit(3)\n")
    assert main(["models", "--plugin", name]) == 2
    assert _error(capsys) == (
        "robustbnn: error: --plugin exits_three: importing it raised SystemExit: sys.exit(3) "
        "at import; a plug-in must not end robustbnn; fix the module (--debug shows the "
        "traceback)")


def test_keyboard_interrupt_at_import_is_a_plugin_error(module, capsys) -> None:  # noqa: ANN001
    name = module("interrupts", "raise KeyboardInterrupt\n")
    assert main(["models", "--plugin", name]) == 2
    assert _error(capsys) == (
        "robustbnn: error: --plugin interrupts: importing it raised KeyboardInterrupt at "
        "import (raised by the module, or Ctrl-C while importing it); fix the module (--debug "
        "shows the traceback)")


def test_an_entry_point_that_exits_is_a_plugin_error(module, capsys,  # noqa: ANN001
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    name = module("exits_entry_point", "raise SystemExit('bye')\n")
    ep = EntryPoint("exiter", name, "robustbnn.models")
    monkeypatch.setattr(plugins, "_entry_points", lambda: [("robustbnn.models", ep)])
    assert main(["models"]) == 2
    assert _error(capsys) == (
        "robustbnn: error: model plug-in entry point exiter = exits_entry_point (group "
        "robustbnn.models) cannot be imported (SystemExit: sys.exit('bye') at import; a "
        "plug-in must not end robustbnn); fix or uninstall the package that declares it "
        "(--debug shows the traceback)")
