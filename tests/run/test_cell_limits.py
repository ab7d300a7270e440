"""Per-cell limits (issue 43, item 9): ``--cell-timeout`` and ``--cell-memory-mb`` fail the cell
that passes them, in one line, once (no retry), and the rest of the run goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from robustbnn.cli import main
from tests.plugins.fresh import forgotten_after_each_test

PLUGIN = "tests.run._slow_plugin"

_forgotten = forgotten_after_each_test(PLUGIN)


def _bench(out: Path, *extra: str) -> list[str]:
    return ["bench", "--suite", "smoke", "--no-cache", "--attacks", "fgsm", "--robustness",
            "none", "--shift", "none", "--plugin", PLUGIN, "--out", str(out), *extra]


@pytest.mark.bench
def test_a_cell_past_its_time_limit_fails_in_one_line_and_the_run_goes_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RBNN_SLOW", "sleep")  # slow_model's training sleeps 2 minutes
    out = tmp_path / "out"
    # --jobs 1: under a limit, one worker process, where SIGALRM interrupts the sleeping cell
    code = main(_bench(out, "--models", "mlp,slow_model", "--jobs", "1", "--cell-timeout", "10"))
    err = capsys.readouterr().err
    assert code == 1
    assert ("robustbnn: error: cell 'train slow_model' failed (the cell ran past its time "
            "limit of 10 s (--cell-timeout); raise the limit or make the cell smaller);") in err
    assert err.count("time limit") == 1  # not retried: it would run as long again
    assert list(json.loads((out / "run.json").read_text())["cells"]["failed"]) == [
        "train slow_model"]
    assert set(pd.read_csv(out / "results.csv")["model"]) == {"mlp"}  # the rest finished


@pytest.mark.bench
def test_a_cell_past_its_memory_limit_fails_in_one_line_in_a_worker(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RBNN_SLOW", "grow")  # 64 MiB more every step, up to 2 GiB
    out = tmp_path / "out"
    code = main(_bench(out, "--models", "slow_model", "--jobs", "2", "--threads", "1",
                       "--cell-memory-mb", "400"))
    err = capsys.readouterr().err
    assert code == 1
    line = next(x for x in err.splitlines() if "'train slow_model' failed" in x)
    assert "more than its limit of 400 MiB (--cell-memory-mb); raise the limit" in line
    assert "grew to 2048 MiB" not in err
    assert err.count("--cell-memory-mb") == 1  # not retried


def test_the_limit_flags_refuse_what_is_no_limit(capsys: pytest.CaptureFixture[str]) -> None:
    for flag, value in (("--cell-timeout", "0"), ("--cell-timeout", "inf"),
                        ("--cell-timeout", "nan"), ("--cell-memory-mb", "-1")):
        with pytest.raises(SystemExit) as exit_:
            main(["bench", "--suite", "smoke", flag, value, "--plan"])
        assert exit_.value.code == 2
        assert value in capsys.readouterr().err
