"""``--jobs auto``, the bench default: one worker per core on the CPU, 1 on a GPU or with Ray,
``$ROBUSTBNN_JOBS`` when set; ``reproduce`` keeps one in-process job."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest
import torch

import robustbnn.cli as cli
from robustbnn.bench import JOBS_ENV, MAX_AUTO_JOBS, auto_jobs
from robustbnn.cli.args import jobs_arg
from robustbnn.cli.bench import bench_options
from robustbnn.cli.parser import build_parser
from robustbnn.errors import ConfigError

CPU = torch.device("cpu")


@pytest.mark.parametrize(("cores", "expected"), [(1, 1), (2, 2), (6, 6), (64, MAX_AUTO_JOBS)])
def test_auto_is_one_worker_per_core_on_the_cpu(monkeypatch: pytest.MonkeyPatch, cores: int,
                                                expected: int) -> None:
    monkeypatch.delenv(JOBS_ENV)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    assert auto_jobs(CPU) == expected
    assert auto_jobs(torch.device("cuda")) == 1  # one process keeps a GPU busy
    assert auto_jobs(CPU, "ray") == 1  # Ray schedules cells itself


def test_the_environment_sets_what_auto_means(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(JOBS_ENV, "3")
    assert auto_jobs(CPU) == 3 and auto_jobs(torch.device("cuda")) == 3
    for bad in ("0", "-2", "two", "1.5"):
        monkeypatch.setenv(JOBS_ENV, bad)
        with pytest.raises(ConfigError, match=rf"^\${JOBS_ENV} is '{bad}', not a positive whole "
                                              "number; set it to the number of worker"):
            auto_jobs(CPU)


def _options(argv: list[str]) -> object:
    parser = build_parser()
    args = parser.parse_args(argv)
    return bench_options(args, argv, Path("unused"), "smoke")


def test_bench_defaults_to_auto_and_reproduce_to_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(JOBS_ENV, "5")
    assert _options(["bench", "--device", "cpu"]).jobs == 5  # auto
    assert _options(["bench", "--device", "cpu", "--jobs", "auto"]).jobs == 5
    assert _options(["bench", "--device", "cpu", "--jobs", "2"]).jobs == 2
    assert _options(["reproduce", "bhn_table1", "--device", "cpu"]).jobs == 1


@pytest.mark.parametrize("bad", ["0", "-1", "many"])
def test_a_bad_jobs_value_is_one_line_exit_2(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:  # argparse's own exit
        cli.main(["bench", "--suite", "smoke", "--jobs", bad])
    assert err.value.code == 2
    assert capsys.readouterr().err == (
        f"robustbnn: error: argument --jobs: expected a positive whole number or auto, got "
        f"'{bad}': pass --jobs 1 to run in-process, --jobs N for N worker processes or --jobs "
        "auto for one per CPU core; see robustbnn bench --help\n")


def test_jobs_type_accepts_auto() -> None:
    assert jobs_arg("auto") == 0 and jobs_arg("4") == 4
    with pytest.raises(argparse.ArgumentTypeError):
        jobs_arg("0")
