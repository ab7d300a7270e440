"""The S = 100 predictive on the mnist5k test set (1,000 images), for every stochastic model.

Run with ``pytest benchmarks/bench_predictive.py``. Per model (784-400-400-10 at its config
defaults; ``mvn``, ``vhn`` and ``bhn_full`` at their own nets), the baseline is a loop over
samples, ``softmax(sample_logits(x, 1))`` a hundred times, as torch-uncertainty and
laplace-torch evaluate (for the dropout family also the loop over the equivalent
``nn.Dropout`` MLP in train mode, torch-uncertainty's MC-dropout wrapper); ours is
:func:`~robustbnn.contract.predict.sample_probs`, the harness's chunked path. Both return the (S,
N, C) probabilities. Models are untrained: the cost of a forward pass does not depend on the
weights' values (SWAG gets K perturbed snapshots, so that it samples at all).
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
from torch import nn

from benchmarks._nets import standard_dropout_mlp
from benchmarks._ratios import measure
from robustbnn.contract.predict import sample_probs
from robustbnn.data.registry import load_dataset
from robustbnn.models import MODELS

S = 100
OWN_NETS = {"mvn", "vhn", "bhn_full"}  # their configs' nets (784-100-10 and smaller)
# The default suite's stochastic models (the samplers hold no samples before training).
STOCHASTIC = tuple(n for n in MODELS.names()
                   if MODELS.get(n).stochastic and MODELS.get(n).in_default)
DROPOUT_FAMILY = ("mc_dropout", "bbalpha_0", "bbalpha_05", "bbalpha_1")
# The non-default samplers, for the record (defaults: bbb "first", mvn "all").
VARIANTS = [("bbb_gaussian", "local_reparam", "none"), ("bbb_gaussian", "local_reparam", "all"),
            ("mvn", "local_reparam", "none"), ("swag", "local_reparam", "none")]


def build(name: str, device: torch.device, **changes: object) -> nn.Module:
    spec = MODELS.get(name)
    if name not in OWN_NETS and "hidden" in {f.name for f in dataclasses.fields(spec.config)}:
        changes = {"hidden": (400, 400), **changes}
    cfg = dataclasses.replace(spec.config(), **changes)
    model = spec.build(cfg, (1, 28, 28), 10, torch.Generator().manual_seed(0)).to(device)
    if name == "swag":  # untrained SWAG has no moments (its samples would be one network)
        _fill_swag_moments(model)
    return model


def _fill_swag_moments(model: nn.Module) -> None:
    """Collect K = ``model.rank`` snapshots of randomly perturbed weights (the full rank)."""
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for _ in range(model.rank):
            for p in model.net.parameters():
                p.add_(0.01 * torch.randn(p.shape, generator=gen).to(p.device))
            model.collect()


@pytest.fixture(scope="module")
def test_images(device: torch.device) -> torch.Tensor:
    return load_dataset("mnist5k").test.x.to(device)  # (1000, 1, 28, 28)


def loop(model: nn.Module, x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    with torch.no_grad():
        return torch.stack([model.sample_logits(x, 1, generator=gen)[0].softmax(-1)
                            for _ in range(S)])


def ours(model: nn.Module, x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    return sample_probs(model, x, S, generator=gen)


@pytest.mark.parametrize("name", STOCHASTIC)
def test_loop_over_samples(benchmark: object, name: str, device: torch.device,
                           test_images: torch.Tensor) -> None:
    measure(benchmark, f"predictive_S100[{name}]", "loop", loop, build(name, device),
            test_images, torch.Generator(device).manual_seed(2), baseline=True,
            rounds=3, device=device)


def nn_dropout_loop(net: nn.Module, x: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return torch.stack([net(x).softmax(-1) for _ in range(S)])


@pytest.mark.parametrize("name", DROPOUT_FAMILY)
def test_loop_over_a_standard_dropout_mlp(benchmark: object, name: str, device: torch.device,
                                          test_images: torch.Tensor) -> None:
    """torch-uncertainty's MC-dropout loop: ``nn.Dropout`` in train mode, a mask per example."""
    net = standard_dropout_mlp(build(name, device)).train()
    measure(benchmark, f"predictive_S100[{name}]", "loop_nn_dropout", nn_dropout_loop, net,
            test_images, baseline=True, rounds=3, device=device)


@pytest.mark.parametrize("name", STOCHASTIC)
def test_robustbnn_sample_probs(benchmark: object, name: str, device: torch.device,
                                test_images: torch.Tensor) -> None:
    measure(benchmark, f"predictive_S100[{name}]", "robustbnn", ours, build(name, device),
            test_images, torch.Generator(device).manual_seed(2), rounds=3, device=device)


@pytest.mark.parametrize(("name", "field", "value"), VARIANTS)
def test_robustbnn_other_sampler(benchmark: object, name: str, field: str, value: object,
                                 device: torch.device, test_images: torch.Tensor) -> None:
    measure(benchmark, f"predictive_S100[{name}]", f"robustbnn_{field}={value}", ours,
            build(name, device, **{field: value}), test_images,
            torch.Generator(device).manual_seed(2), rounds=3, device=device)
