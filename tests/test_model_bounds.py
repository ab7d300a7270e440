"""Bounds before work on what sizes a run's memory and time (issue 43, item 8): a model's
size from its own parameter count, epochs and ``--retries``, refused with one line (exit 2)
by ``--plan`` and ``--print-config`` as by a run."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from robustbnn import bench_config
from robustbnn.bench_config import TRAIN_COPIES, model_footprint
from robustbnn.cli import main
from robustbnn.config import MAX_EPOCHS, TrainConfig
from robustbnn.models import MODELS
from robustbnn.models.base import ModelSpec
from robustbnn.models.mlp import MLEConfig, build_mlp

GIB = 2**30
MACHINE_MB = 23 * 1024  # the machine of the issue


@pytest.fixture(autouse=True)
def _machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine of 23 GiB, whatever this one has."""
    monkeypatch.setattr(bench_config, "machine_memory_mb", lambda: MACHINE_MB)


def _refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    argv = ["bench", "--suite", "smoke", "--quiet", "--out", str(tmp_path / "out"),
            "--cache-dir", str(tmp_path / "cache"), *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert not (tmp_path / "out").exists()  # before any work
    return err[0]


@pytest.mark.parametrize("mode", ["--plan", "--print-config"])
def test_a_model_too_large_for_the_machine_is_refused_before_work(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str) -> None:
    line = _refused(tmp_path, capsys, "--models", "mlp", "--set", "mlp.hidden=(100000000,)",
                    mode)
    params = 784 * 10**8 + 10**8 + 10**8 * 10 + 10  # the MLP on 28x28 images, 10 classes
    need = params * 4 * TRAIN_COPIES / GIB
    assert line == (
        f"robustbnn: error: --set mlp.hidden=(100000000,) makes mlp too large to train here: "
        f"{params:,} parameters, about {need:,.1f} GiB while training ({TRAIN_COPIES} float32 "
        f"copies: weights, gradients, Adam's two moments and the kept best epoch; buffers "
        f"once), more than the {MACHINE_MB - 1024:,} MiB this machine has beside --memory-mb "
        f"1024; set a smaller value with --set mlp.hidden=...")


def test_ten_gigabytes_of_weights_do_not_train_on_a_23_gib_machine(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _refused(tmp_path, capsys, "--models", "mlp", "--set", "mlp.hidden=(50000,50000)",
                    "--plan")
    assert "--set mlp.hidden=(50000,50000) makes mlp too large to train here: 2,539,800,010 " \
        "parameters, about 47.3 GiB while training" in line


def test_the_limit_is_the_machine_beside_the_memory_budget(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wide = ("--models", "mlp", "--set", "mlp.hidden=(20000,20000)")  # 401 M params: 7.5 GiB
    assert main(["bench", "--suite", "smoke", "--quiet", *wide, "--print-config"]) == 0
    capsys.readouterr()
    line = _refused(tmp_path, capsys, *wide, "--memory-mb", "16000", "--print-config")
    assert f"more than the {MACHINE_MB - 16000:,} MiB this machine has beside --memory-mb" in line


def test_a_suite_default_that_is_too_large_names_the_model_config(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    @dataclasses.dataclass(frozen=True)
    class HugeConfig(MLEConfig):
        hidden: tuple[int, ...] = (60000, 60000)

    spec = ModelSpec(build=build_mlp, config=HugeConfig, description="too large",
                     reference="none", stochastic=False, shrink={"smoke": {}})
    monkeypatch.setitem(MODELS._items, "huge", spec)
    line = _refused(tmp_path, capsys, "--models", "huge", "--print-config")
    assert line.startswith("robustbnn: error: huge (its config) is too large to train here: ")
    assert line.endswith("set smaller sizes with --set huge.FIELD=...")


def test_the_footprint_counts_parameters_on_the_meta_device() -> None:
    count = 784 * 400 + 400 + 400 * 400 + 400 + 400 * 10 + 10
    assert model_footprint(MODELS.get("mlp"), MLEConfig(), (1, 28, 28), 10) == (count,
                                                                                 4 * count, 0)
    sgld = MODELS.get("sgld")
    *_, stored = model_footprint(sgld, sgld.config(), (1, 28, 28), 10)
    assert stored > 0  # posterior samples are buffers, counted once


@pytest.mark.parametrize("name", MODELS.names())
def test_every_default_model_fits_a_small_machine(name: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench_config, "machine_memory_mb", lambda: 4096)
    spec = MODELS.get(name)
    bench_config.check_model_memory(name, spec, spec.config(), (1, 28, 28), 10, memory_mb=1024,
                                    given=())


def test_epochs_have_a_documented_cap(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert TrainConfig.ranges["epochs"].high == MAX_EPOCHS == 10_000
    line = _refused(tmp_path, capsys, "--set", "mlp.epochs=10000000000000", "--plan")
    assert line == ("robustbnn: error: mlp.epochs=10000000000000 is out of range: epochs must "
                    "be in [1, 10000]; set another value with --set mlp.epochs=...")


def test_retries_are_bounded(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:  # argparse's refusal: one line too
        main(["bench", "--suite", "smoke", "--retries", "1000000000", "--plan"])
    assert info.value.code == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == ("robustbnn: error: argument --retries: expected a whole number from 0 to "
                    "10, got '1000000000': a cell that fails 11 tries in a row will not pass "
                    "on the next; see robustbnn bench --help")
    assert main(["bench", "--suite", "smoke", "--quiet", "--retries", "10",
                 "--print-config"]) == 0
