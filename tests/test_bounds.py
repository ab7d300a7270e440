"""Bounds on every count, and every config value checked before work (issue 28, defects 8
and 14): one line, exit 2, naming the value, the bound and the fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from robustbnn.bench_config import max_samples
from robustbnn.cli import main
from robustbnn.cli.bench import bench_options
from robustbnn.cli.parser import build_parser
from robustbnn.config import check_config
from robustbnn.models import MODELS


def _bench(tmp_path: Path, *extra: str) -> list[str]:
    return ["bench", "--suite", "smoke", "--quiet", "--out", str(tmp_path / "out"),
            "--cache-dir", str(tmp_path / "cache"), *extra]


def _refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    assert main(_bench(tmp_path, *extra)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert not (tmp_path / "out").exists()  # before any work
    return err[0]


def test_a_sample_count_beyond_the_memory_budget_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _refused(tmp_path, capsys, "--targeted-samples", "1000000000") == (
        "robustbnn: error: --targeted-samples 1000000000 cannot fit the memory budget: one "
        "attack gradient holds all 1000000000 samples of an example at once, at least 119.2 "
        "GiB, more than --memory-mb 1024; pass another --targeted-samples (at most 8388608) "
        "or raise --memory-mb")


def test_the_bound_follows_the_budget(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    n = max_samples(1, grad=True) + 1
    line = _refused(tmp_path, capsys, "--targeted-samples", str(n), "--memory-mb", "1")
    assert f"--targeted-samples {n} cannot fit" in line and "at most 8192)" in line
    line = _refused(tmp_path, capsys, "--attacks", "fgsm,pgd", "--memory-mb", "1",
                    "--set", f"pgd.n_samples=(1, {n})")
    assert line.startswith(f"robustbnn: error: pgd.n_samples 1,{n} cannot fit the memory "
                           "budget")
    assert "set fewer with --set pgd.n_samples=... (at most 8192)" in line


def test_jobs_and_threads_are_bounded_by_the_cores(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    assert _refused(tmp_path, capsys, "--jobs", "13") == (
        "robustbnn: error: --jobs 13 is more than 4 per CPU core of this machine (3 cores): "
        "extra processes and threads only cost memory; use at most 12")
    assert "--threads 100 is more than 4 per CPU core" in _refused(
        tmp_path, capsys, "--threads", "100")
    monkeypatch.setenv("ROBUSTBNN_JOBS", "500")
    assert "$ROBUSTBNN_JOBS (--jobs auto) 500 is more" in _refused(tmp_path, capsys)


def test_a_memory_budget_beyond_the_machine_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    line = _refused(tmp_path, capsys, "--device", "cpu", "--memory-mb", str(total + 1))
    assert line == (f"robustbnn: error: --memory-mb {total + 1} is more than this machine's "
                    f"memory ({total} MiB); use at most {total}, or less to leave room for the "
                    "data and the models")


def test_init_uniform_without_a_scale_is_refused_up_front(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _refused(tmp_path, capsys, "--set", "mlp.init=uniform") == (
        "robustbnn: error: mlp.init='uniform' needs init_scale > 0, got mlp.init_scale=0.0; "
        "set it with --set mlp.init_scale=..., or choose another init: one of ['torch', "
        "'glorot', 'uniform']")


@pytest.mark.parametrize(("sets", "words"), [
    (("laplace.subset_of_weights=every",), "subset_of_weights must be one of ['last_layer', "
                                           "'all']"),
    (("laplace.hessian_structure=full", "laplace.subset_of_weights=all"),
     "laplace.subset_of_weights='all' needs hessian_structure one of ['kron', 'diag'], got "
     "laplace.hessian_structure='full'"),
    (("laplace.subset_of_weights=all", "laplace.arch=cnn"),
     "needs arch one of ['mlp'], got laplace.arch='cnn'"),
])
def test_laplace_choices_are_checked_before_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], sets: tuple[str, ...],
        words: str) -> None:
    extra = [a for s in sets for a in ("--set", s)]
    assert words in _refused(tmp_path, capsys, "--models", "laplace", *extra)


def test_a_choice_and_what_it_needs_may_come_in_either_order() -> None:
    from robustbnn.settings import model_config

    for sets in (("mlp.init=uniform", "mlp.init_scale=0.6"),
                 ("mlp.init_scale=0.6", "mlp.init=uniform")):
        assert model_config("mlp", sets).init == "uniform"


@pytest.mark.parametrize("name", MODELS.names())
def test_every_default_config_meets_what_its_choices_need(name: str) -> None:
    assert check_config(MODELS.get(name).config(), owner=name)


def test_an_in_range_run_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ROBUSTBNN_JOBS", raising=False)
    args = build_parser().parse_args(["bench", "--jobs", "2", "--threads", "1"])
    assert bench_options(args, [], Path("unused"), "smoke").jobs == 2
