"""Accuracy of the foundation models on real MNIST, with the default configs."""

from __future__ import annotations

import dataclasses
import os

import pytest
import torch

from robustbnn.data import load_dataset
from robustbnn.data.mnist import mnist_available
from robustbnn.data.root import resolve_data_root
from robustbnn.models import MODELS
from robustbnn.predict import sample_probs
from robustbnn.train import fit


def _test_accuracy(name: str, dataset: str, **changes) -> float:
    data = load_dataset(dataset, resolve_data_root(None) if dataset != "mnist5k" else None)
    spec = MODELS.get(name)
    cfg = dataclasses.replace(spec.config(), **changes)
    gen = torch.Generator().manual_seed(0)
    model = spec.build(cfg, (1, 28, 28), 10, gen)
    fit(model, cfg, data, name=name, stochastic=spec.stochastic, generator=gen, progress=False)
    probs = sample_probs(model.eval(), data.test.x, 100, generator=torch.Generator().manual_seed(1))
    return (probs.mean(0).argmax(-1) == data.test.y).float().mean().item()


@pytest.mark.parametrize(("name", "target"), [("mlp", 0.93), ("mc_dropout", 0.94)])
def test_mnist5k_accuracy(name: str, target: float) -> None:
    assert _test_accuracy(name, "mnist5k") >= target


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mlp", "mc_dropout"])
def test_full_mnist_accuracy(name: str) -> None:
    if not os.environ.get("ROBUSTBNN_DATA") or not mnist_available(resolve_data_root(None)):
        pytest.skip("full MNIST not found: set ROBUSTBNN_DATA to a folder holding mnist/")
    assert _test_accuracy(name, "mnist", epochs=20) >= 0.980
