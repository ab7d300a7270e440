"""Values refused at the CLI boundary with one line (issue 43, item 11 c, d and e): an
``--out`` where no run belongs, empty values that would silently mean the default, and
digits other than ASCII 0-9."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import robustbnn.bench
from robustbnn.cli import main


@pytest.fixture(autouse=True)
def _no_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that gets past every check fails the test instead of writing anything."""
    def ran(*args: object, **kwargs: object) -> None:
        raise AssertionError("the run started")

    monkeypatch.setattr(robustbnn.bench, "run_bench", ran)


def _line(argv: list[str], capsys: pytest.CaptureFixture[str], code: int = 2) -> str:
    assert main(argv) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def _bench(tmp_path: Path, *extra: str) -> list[str]:
    return ["bench", "--suite", "smoke", "--quiet", "--cache-dir", str(tmp_path / "cache"),
            *extra]


def _parse_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


# (c) --out where no run belongs

def test_out_inside_the_model_cache_is_refused(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cache" / "run"
    line = _line(_bench(tmp_path, "--out", str(out)), capsys)
    assert line == (f"robustbnn: error: --out {out} is inside the model cache "
                    f"{tmp_path / 'cache'} (--cache-dir); choose a folder outside it")
    assert not out.exists()


def test_out_inside_the_data_root_is_refused(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "data"
    root.mkdir()
    out = root / "mnist" / "run"
    line = _line(_bench(tmp_path, "--data-root", str(root), "--out", str(out)), capsys)
    assert line == (f"robustbnn: error: --out {out} is inside the data root {root} "
                    f"(--data-root); choose a folder outside it")
    monkeypatch.setenv("ROBUSTBNN_DATA", str(root))
    line = _line(_bench(tmp_path, "--out", str(root)), capsys)
    assert line.endswith(f"is inside the data root {root} ($ROBUSTBNN_DATA); choose a folder "
                         "outside it")


def test_out_inside_another_run_s_cells_is_refused(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    (run / "cells").mkdir(parents=True)
    (run / "cells" / "identity.json").write_text(json.dumps({"identity": "x"}))
    for out in (run / "cells", run / "cells" / "models" / "again"):
        line = _line(_bench(tmp_path, "--out", str(out)), capsys)
        assert line == (f"robustbnn: error: --out {out} is inside the cells/ folder of the "
                        f"run {run}, whose stored cells it would mix with its own; choose "
                        "a folder outside it")


def test_out_at_the_filesystem_root_is_refused(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    line = _line(_bench(tmp_path, "--out", "/"), capsys)
    assert line == ("robustbnn: error: --out / is the root of the file system; choose a "
                    "folder of its own, like reports/latest")


# (d) empty values

@pytest.mark.parametrize("flag", ["--models", "--ood", "--attacks"])
def test_an_empty_name_list_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       flag: str) -> None:
    line = _parse_error(_bench(tmp_path, flag, "", "--plan"), capsys)
    assert line == (f"robustbnn: error: argument {flag}: expected comma-separated names, got "
                    "''; omit the flag to get the default; see robustbnn bench --help")


@pytest.mark.parametrize("name", ["ROBUSTBNN_CACHE", "ROBUSTBNN_DATA", "ROBUSTBNN_JOBS"])
def test_an_empty_variable_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                      monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(name, "")
    argv = ["bench", "--suite", "smoke", "--quiet", "--out", str(tmp_path / "out"), "--plan"]
    assert _line(argv, capsys) == (f"robustbnn: error: ${name} is set but empty; unset it "
                                   "to get the default")


def test_an_empty_cache_dir_is_refused(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    line = _parse_error(["bench", "--cache-dir", "", "--plan"], capsys)
    assert line == ("robustbnn: error: argument --cache-dir: expected a folder, got ''; omit "
                    "the flag to get the default; see robustbnn bench --help")


# (e) ASCII digits only

@pytest.mark.parametrize(("flag", "value"), [
    ("--seed", "٣"), ("--seed", "３"), ("--memory-mb", "١٠٢٤"), ("--retries", "٢"),
    ("--threads", "１"), ("--targeted-samples", "٣"), ("--jobs", "٢"),
])
def test_integer_flags_take_only_ascii_digits(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str], flag: str,
                                              value: str) -> None:
    line = _parse_error(_bench(tmp_path, flag, value, "--plan"), capsys)
    assert line.startswith(f"robustbnn: error: argument {flag}: expected ")
    assert f"in the ASCII digits 0-9, got {value!r}" in line


def test_seeds_take_only_ascii_digits(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    line = _parse_error(["reproduce", "bbb_table1", "--seeds", "0,٣", "--plan"], capsys)
    assert "in the ASCII digits 0-9, got '0,٣'" in line


def test_a_negative_seed_still_names_its_range(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert "--seed -1 is out of range" in _line(_bench(tmp_path, "--seed", "-1", "--plan"),
                                                 capsys)


@pytest.mark.parametrize("item", ["mlp.epochs=٣", "mlp.hidden=(٣,)", "mlp.lr=٠.١",
                                  "mlp.epochs=３"])
def test_set_values_take_only_ascii_digits(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           item: str) -> None:
    line = _line(_bench(tmp_path, "--models", "mlp", "--set", item, "--plan"), capsys)
    value = item.partition("=")[2]
    assert line == (f"robustbnn: error: mlp.{item.split('.')[1].partition('=')[0]}: {value!r} "
                    "has digits other than the ASCII 0-9, which are no number here; write it "
                    "with 0-9")


def test_jobs_variable_takes_only_ascii_digits(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROBUSTBNN_JOBS", "٢")
    line = _line(["bench", "--suite", "smoke", "--quiet", "--plan"], capsys)
    assert line.startswith("robustbnn: error: $ROBUSTBNN_JOBS is '٢', not a positive whole")
