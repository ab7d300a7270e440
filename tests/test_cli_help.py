"""``robustbnn COMMAND --help`` is complete: every option says what it does and its default,
each command offers only the options it uses, and a bad flag value is one line."""

from __future__ import annotations

import argparse
import ast
import inspect
from pathlib import Path

import pytest

from robustbnn.cli import main
from robustbnn.cli import report as report_module
from robustbnn.cli.parser import build_parser
from robustbnn.suites import DEFAULT_WALL_TIME

COMMANDS = ("bench", "report", "reproduce", "check", "models", "datasets")
# How a help text shows a default that is not its str(): --jobs auto parses to 0 (auto_jobs).
SHOWN = {("bench", "--jobs"): "auto"}


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _options(command: str) -> list[argparse.Action]:
    return [a for a in _subparsers()[command]._actions if not isinstance(a, argparse._HelpAction)]


def _has_default(action: argparse.Action) -> bool:
    return action.default not in (None, False, [], "", argparse.SUPPRESS)


def test_every_command_is_walked() -> None:
    assert tuple(_subparsers()) == COMMANDS


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_has_help_and_shows_its_default(command: str) -> None:
    missing, unshown = [], []
    for action in _options(command):
        name = action.option_strings[-1] if action.option_strings else action.dest
        if not (action.help or "").strip():
            missing.append(name)
            continue
        if not _has_default(action):
            continue
        shown = "on" if action.default is True else SHOWN.get((command, name),
                                                               str(action.default))
        help_text = action.help % {"default": action.default}
        if "default" not in help_text or shown not in help_text:
            unshown.append(f"{name} (default {action.default!r}, help {help_text!r})")
    assert missing == [], f"robustbnn {command}: options without help"
    assert unshown == [], f"robustbnn {command}: defaults not shown"


@pytest.mark.parametrize("command", ["bench", "reproduce", "check"])
def test_device_help_says_what_auto_means(command: str) -> None:
    device = next(a for a in _options(command) if "--device" in a.option_strings)
    assert device.default == "auto"
    assert "cuda when available, else cpu" in device.help


def test_bench_help_quotes_the_default_suites_wall_time() -> None:
    suite = next(a for a in _options("bench") if "--suite" in a.option_strings)
    assert DEFAULT_WALL_TIME in suite.help


def _used_attributes(module: object) -> set[str]:
    """Every ``args.NAME`` and ``getattr(args, "NAME", ...)`` in a module's source."""
    tree = ast.parse(inspect.getsource(module))
    used = {n.attr for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and n.value.id == "args"}
    used |= {n.args[1].value for n in ast.walk(tree)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
             and n.func.id == "getattr" and len(n.args) > 1
             and isinstance(n.args[1], ast.Constant)}
    return used


def test_report_offers_only_the_options_it_uses() -> None:
    offered = {a.dest for a in _options("report")}
    # main() reads debug and quiet for every command; cmd_report and closing_summary the rest.
    used = _used_attributes(report_module) | {"debug", "quiet"}
    assert offered - used == set(), "options report offers but never reads"
    assert "data_root" not in offered and "plugin" not in offered


def test_report_refuses_the_options_it_does_not_use(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for extra in (["--data-root", str(tmp_path)], ["--plugin", "examples.measure_plugin"]):
        with pytest.raises(SystemExit) as err:
            main(["report", str(tmp_path), *extra])
        assert err.value.code == 2
        lines = capsys.readouterr().err.splitlines()
        assert lines == [f"robustbnn: error: unrecognized arguments: {' '.join(extra)}; see "
                         "robustbnn report --help"]


@pytest.mark.parametrize("command", ["bench", "reproduce"])
def test_jobs_0_is_one_line_naming_the_flag_and_the_way_out(
        command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        main([command, "--jobs", "0"])
    assert err.value.code == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("robustbnn: error: argument --jobs: ")
    assert "--jobs 1" in lines[0] and "--jobs auto" in lines[0]
    assert lines[0].endswith(f"see robustbnn {command} --help")
    assert "usage:" not in captured.err and captured.out == ""


def test_a_missing_command_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        main([])
    assert err.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "robustbnn: error: the following arguments are required: COMMAND; see robustbnn --help"]
