"""Dense-layer initialisation as model config: torch, Glorot (the papers' code), uniform."""

from __future__ import annotations

import math

import pytest
import torch

from robustbnn.errors import ConfigError
from robustbnn.models import MODELS
from robustbnn.models.nets import init_linear_
from robustbnn.settings import model_config


def _first_layer(name: str, *overrides: str) -> list[torch.Tensor]:
    cfg = model_config(name, ("*.hidden=(256,)", *overrides))
    model = MODELS.get(name).build(cfg, (1, 28, 28), 10, torch.Generator().manual_seed(0))
    return [p.detach() for p in model.parameters()]


@pytest.mark.parametrize("name", ["mlp", "dropout", "mc_dropout", "bbalpha_1"])
def test_glorot_uniform_bounds_and_zero_bias(name: str) -> None:
    weight, bias = _first_layer(name, "*.init=glorot")[:2]
    bound = math.sqrt(6 / (784 + 256))  # 0.0760, about twice torch's 1/sqrt(784) = 0.0357
    assert weight.shape == (256, 784)
    assert bound * 0.95 < weight.abs().max() <= bound
    assert weight.std().item() == pytest.approx(bound / math.sqrt(3), rel=0.02)
    assert torch.count_nonzero(bias) == 0
    torch_w = _first_layer(name)[0]
    assert torch_w.abs().max() <= 1 / math.sqrt(784)


def test_bbb_mu_takes_the_tutorials_uniform_init() -> None:
    params = _first_layer("bbb_gaussian", "*.init=uniform", "*.init_scale=0.6")
    mu_w, mu_b = params[0], params[1]
    assert 0.55 < mu_w.abs().max() <= 0.6 and 0.5 < mu_b.abs().max() <= 0.6


def test_init_draws_from_the_generator() -> None:
    a = _first_layer("mlp", "*.init=glorot")[0]
    b = _first_layer("mlp", "*.init=glorot")[0]
    torch.testing.assert_close(a, b)


def test_bad_init_is_one_clear_error() -> None:
    layer = torch.nn.Linear(3, 2)
    with pytest.raises(ConfigError, match="unknown init 'xavier'; known: \\['torch', 'glorot'"):
        init_linear_(layer, None, "xavier")
    with pytest.raises(ConfigError, match="init 'uniform' needs init_scale > 0"):
        init_linear_(layer, None, "uniform", 0.0)
