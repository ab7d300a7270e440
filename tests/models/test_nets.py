"""Backbones: the Li & Gal CNN trunk, and the contract of each dropout model as a CNN."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from robustbnn.config import override
from robustbnn.errors import ConfigError
from robustbnn.models import MODELS
from robustbnn.models.nets import ConvFeatures, init_conv_, init_linear_
from tests._helpers import seeded
from tests._toys import build, draw_dropout_samples, dropout_masks

S, B, C = 3, 5, 7
CNN_MODELS = ("mlp", "dropout", "mc_dropout", "bbalpha_0", "bbalpha_05", "bbalpha_1")


def test_conv_features_sizes() -> None:
    assert ConvFeatures((1, 28, 28), (32, 32), "relu", seeded(0)).out_features == 32 * 12 * 12
    trunk = ConvFeatures((1, 6, 7), (32, 32), "relu", seeded(0))  # 6×7 → 4×5 → 2×3 → 1×1
    assert trunk.out_features == 32
    assert trunk(torch.rand(B, 1, 6, 7)).shape == (B, 32)
    assert trunk(torch.rand(B, 42)).shape == (B, 32)  # flattened inputs are reshaped


def test_conv_features_reject_bad_inputs() -> None:
    with pytest.raises(ConfigError, match="image"):
        ConvFeatures((42,), (32, 32), "relu", seeded(0))
    with pytest.raises(ConfigError, match="too small"):
        ConvFeatures((1, 5, 7), (32, 32), "relu", seeded(0))


def test_li_gal_cnn_parameter_count() -> None:
    spec = MODELS.get("mc_dropout")
    cfg = spec.config()
    model = spec.build(override(cfg, "arch", "cnn", owner="mc_dropout"), (1, 28, 28), 10,
                       seeded(0))
    # conv 1→32, conv 32→32, dense 4608→100, dense 100→10 (Keras mnist_cnn with 100 units)
    expected = (9 * 32 + 32) + (9 * 32 * 32 + 32) + (4608 * 100 + 100) + (100 * 10 + 10)
    assert sum(p.numel() for p in model.parameters()) == expected


def test_unknown_arch_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="arch 'resnet'"):
        build("mc_dropout", arch="resnet")


def test_inits_follow_the_generator_and_torch_defaults() -> None:
    a = init_conv_(nn.Conv2d(3, 4, 3), seeded(0))
    b = init_conv_(nn.Conv2d(3, 4, 3), seeded(0))
    torch.testing.assert_close(a.weight, b.weight, rtol=0, atol=0)
    bound = 1 / 27**0.5  # kaiming_uniform(a=√5) and the bias both give U(±1/√fan_in)
    assert a.weight.abs().max() <= bound and a.bias.abs().max() <= bound
    lin = init_linear_(nn.Linear(27, 4), seeded(0))
    assert lin.weight.abs().max() <= bound and lin.bias.abs().max() <= bound


def test_mlp_path_is_unchanged_by_the_cnn_option() -> None:
    model = build("mc_dropout")
    assert model.features is None
    assert [tuple(layer.weight.shape) for layer in model.layers] == [(11, 42), (13, 11), (7, 13)]


def test_cnn_trunk_is_computed_once_and_shared_across_samples() -> None:
    model = build("mc_dropout", arch="cnn")
    seen: list[tuple[int, ...]] = []
    model.features.register_forward_hook(lambda m, i, o: seen.append(tuple(o.shape)))
    out = model.sample_logits(torch.rand(B, 1, 6, 7), S, generator=seeded(0))
    assert seen == [(B, 32)]
    assert out.shape == (S, B, C)


def test_cnn_has_no_dropout_before_the_convs() -> None:
    # p = 0 leaves only the conv trunk, which must be noise-free even when input_p > 0.
    model = build("bbalpha_05", arch="cnn", p=0.0, input_p=0.5)
    out = model.sample_logits(torch.rand(B, 1, 6, 7), S, generator=seeded(0))
    torch.testing.assert_close(out[0], out[1], rtol=0, atol=0)


@pytest.mark.parametrize("mode", ["per_sample", "per_example"])
def test_cnn_drops_the_conv_features(mode: str) -> None:
    model = build("mc_dropout", arch="cnn", cnn_hidden=(9,))
    x = torch.rand(B, 1, 6, 7)
    feats = model.features(x)
    g = seeded(4)
    h = feats * dropout_masks(mode, S, B, 32, 0.5, g) / 0.5
    h = model.layers[0](h).relu() * dropout_masks(mode, S, B, 9, 0.5, g) / 0.5
    torch.testing.assert_close(draw_dropout_samples(model, mode, x, S, seeded(4)),
                               model.layers[1](h))


# The contract of tests/models/test_contract.py, for the CNN variant of each dropout model.


@pytest.mark.parametrize("name", CNN_MODELS)
def test_cnn_shape_finite_and_input_gradient(name: str) -> None:
    model = build(name, arch="cnn", num_classes=C)
    x = torch.rand(B, 1, 6, 7, requires_grad=True)
    out = model.sample_logits(x, S, generator=seeded(0))
    assert out.shape == (S, B, C)
    assert torch.isfinite(out).all()
    out.logsumexp(-1).sum().backward()
    assert x.grad is not None and x.grad.abs().sum() > 0


@pytest.mark.parametrize("name", CNN_MODELS)
def test_cnn_reproducible_and_varies(name: str) -> None:
    model = build(name, arch="cnn")
    x = torch.rand(B, 1, 6, 7)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    model.eval()
    a = model.sample_logits(x, S, generator=seeded(1))
    model.train()
    b = model.sample_logits(x, S, generator=seeded(1))
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    c = model.sample_logits(x, S, generator=seeded(2))
    if MODELS.get(name).stochastic:
        assert not torch.equal(a, c)
        assert not torch.equal(a[0], a[1])
    else:
        torch.testing.assert_close(a, c, rtol=0, atol=0)
        torch.testing.assert_close(a[0], a[1], rtol=0, atol=0)
    for k, v in model.state_dict().items():
        torch.testing.assert_close(before[k], v, rtol=0, atol=0)


@pytest.mark.parametrize("name", CNN_MODELS)
def test_cnn_loss_is_finite_and_trains_every_layer(name: str) -> None:
    model = build(name, arch="cnn")
    loss = model.loss(torch.rand(B, 1, 6, 7), torch.randint(0, 7, (B,)), n_train=100,
                      generator=seeded(0))
    loss.backward()
    assert torch.isfinite(loss)
    for conv in model.features.convs:
        assert conv.weight.grad is not None and conv.weight.grad.abs().sum() > 0
