"""The MLE, dropout and MC-dropout baselines: defaults, and the exact forward passes."""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn.functional as F

from robustbnn.models import MODELS
from robustbnn.models._dropout import keep_mask
from robustbnn.models.mlp import DropoutMLP
from robustbnn.models.nets import linear_stack
from tests._helpers import seeded
from tests._toys import build, draw_dropout_samples, dropout_masks

S, B, C = 3, 5, 7


def _plain(model: DropoutMLP, h: torch.Tensor, masks: list[torch.Tensor] | None = None,
           p: float = 0.5) -> torch.Tensor:
    """The MLP by hand; ``masks`` (one per hidden layer) apply inverted dropout."""
    for i, layer in enumerate(model.layers):
        h = layer(h)
        if i < len(model.layers) - 1:
            h = h.relu()
            if masks is not None:
                h = h * masks[i] / (1 - p)
    return h


def test_defaults() -> None:
    mlp, drop, mc = (MODELS.get(n).config() for n in ("mlp", "dropout", "mc_dropout"))
    for cfg in (mlp, drop, mc):
        assert (cfg.hidden, cfg.activation, cfg.arch) == ((400, 400), "relu", "mlp")
    assert mlp.weight_decay == 0.0
    assert drop.p == 0.5 and (mc.p, mc.input_p) == (0.5, 0.0)
    assert not MODELS.get("mlp").stochastic and not MODELS.get("dropout").stochastic
    assert MODELS.get("mc_dropout").stochastic
    names = MODELS.names()
    assert names.index("dropout") == names.index("mlp") + 1


def test_mlp_is_784_400_400_10_with_the_same_init_as_before() -> None:
    spec = MODELS.get("mlp")
    model = spec.build(spec.config(), (1, 28, 28), 10, seeded(0))
    reference = linear_stack([784, 400, 400, 10], seeded(0))
    assert len(model.layers) == 3
    for got, want in zip(model.layers, reference, strict=True):
        torch.testing.assert_close(got.weight, want.weight, rtol=0, atol=0)
        torch.testing.assert_close(got.bias, want.bias, rtol=0, atol=0)


def test_dropout_predicts_with_the_plain_network() -> None:
    model = build("dropout")
    x = torch.rand(B, 1, 6, 7)
    out = model.sample_logits(x, S, generator=seeded(0))
    want = _plain(model, x.flatten(1))
    for s in range(S):
        torch.testing.assert_close(out[s], want)


def test_dropout_trains_with_inverted_dropout_after_each_hidden_layer() -> None:
    model = build("dropout")
    x, y = torch.rand(B, 1, 6, 7), torch.randint(0, C, (B,))
    g = seeded(1)
    masks = [keep_mask((1, B, 11), 0.5, generator=g), keep_mask((1, B, 13), 0.5, generator=g)]
    want = F.cross_entropy(_plain(model, x.flatten(1), masks)[0], y)
    torch.testing.assert_close(model.loss(x, y, n_train=10, generator=seeded(1)), want)
    assert model.loss(x, y, n_train=10, generator=seeded(2)) != want


@pytest.mark.parametrize("mode", ["per_sample", "per_example"])
def test_mc_dropout_samples_drop_hidden_units_but_not_inputs(mode: str) -> None:
    model = build("mc_dropout")
    x = torch.rand(B, 1, 6, 7)
    g = seeded(2)
    masks = [dropout_masks(mode, S, B, 11, 0.5, g), dropout_masks(mode, S, B, 13, 0.5, g)]
    torch.testing.assert_close(draw_dropout_samples(model, mode, x, S, seeded(2)),
                               _plain(model, x.flatten(1), masks))


@pytest.mark.parametrize("mode", ["per_sample", "per_example"])
def test_mc_dropout_input_p_drops_pixels(mode: str) -> None:
    model = build("mc_dropout", p=0.0, input_p=0.25)
    x = torch.rand(B, 1, 6, 7)
    h = x.flatten(1) * dropout_masks(mode, S, B, 42, 0.25, seeded(3)) / 0.75
    torch.testing.assert_close(draw_dropout_samples(model, mode, x, S, seeded(3)),
                               _plain(model, h))


def test_mlp_weight_decay_reaches_the_optimiser() -> None:
    from robustbnn.training.fit import _optimizer

    cfg = dataclasses.replace(MODELS.get("mlp").config(), weight_decay=1e-5)
    opt = _optimizer(build("mlp"), cfg)
    assert opt.param_groups[0]["weight_decay"] == 1e-5
