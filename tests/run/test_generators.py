"""Initialisation draws from a CPU generator (same initial weights on every device); training
and evaluation draw from generators on the run device. Pinned on CPU with recording fakes."""

from __future__ import annotations

import types

import pytest
import torch
from torch import nn

from robustbnn.bench_config import BenchConfig
from robustbnn.config import TrainConfig
from robustbnn.models import MODELS, ModelSpec
from robustbnn.run import context as context_module
from robustbnn.run.cells import Cell
from robustbnn.run.context import Context, RunSpec
from robustbnn.training import fit_or_load as train_module
from robustbnn.training.fit import FitReport


class _Fake(nn.Module):
    num_classes = 3

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.zeros(1))

    def to(self, device: torch.device) -> _Fake:  # no CUDA here: record the move instead
        self.moved_to = torch.device(device)
        return self


@pytest.mark.bench
def test_init_generator_is_cpu_and_training_generator_is_on_the_run_device(monkeypatch) -> None:
    received: dict[str, torch.device] = {}

    def fake_generator(device: torch.device | str, seed: object, *keys: str):
        return types.SimpleNamespace(device=torch.device(device), keys=keys)

    def build(cfg, shape, num_classes, generator):
        received["build"] = generator.device
        return _Fake()

    def fit(model, cfg, data, *, name, generator, progress):
        received["fit"] = generator.device
        return FitReport(0, 0, 0.0, 0.0, ())

    monkeypatch.setattr(train_module, "make_generator", fake_generator)
    monkeypatch.setattr(train_module, "fit", fit)
    data = types.SimpleNamespace(train=types.SimpleNamespace(x=torch.zeros(4, 1, 5, 6)),
                                 num_classes=3, fingerprint="toy")
    with MODELS.temporary("_fake_device_model", ModelSpec(build, TrainConfig, "fake", "test")):
        setup = train_module.TrainSetup(0, torch.device("cuda"), None)
        model, _ = train_module.fit_or_load("_fake_device_model", TrainConfig(), data, setup)
    assert received == {"build": torch.device("cpu"), "fit": torch.device("cuda")}
    assert model.moved_to == torch.device("cuda")


def test_cell_streams_are_on_the_run_device_and_derive_from_the_cell_id(monkeypatch) -> None:
    calls = []
    monkeypatch.setattr(context_module, "make_generator",
                        lambda device, seed, *keys: calls.append((str(device), seed, keys)))
    cell = Cell("fgsm", "mlp", {"S_attack": 1})
    spec = RunSpec(BenchConfig(), None, False, "cuda", "unused")
    Context(cell, spec, data=None).gen("attack")
    assert calls == [("cuda", cell.id, ("attack",))]


def test_same_seed_gives_the_same_initial_weights_whatever_ran_before() -> None:
    spec = MODELS.get("mlp")
    gen = train_module.make_generator(train_module.CPU, 0, "mlp", "init")
    first = spec.build(spec.config(), (1, 28, 28), 10, gen).state_dict()
    torch.randn(100)  # global RNG use in between must not matter
    gen = train_module.make_generator(train_module.CPU, 0, "mlp", "init")
    second = spec.build(spec.config(), (1, 28, 28), 10, gen).state_dict()
    assert all(torch.equal(first[k], second[k]) for k in first)
