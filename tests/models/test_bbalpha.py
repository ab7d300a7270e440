"""BB-α dropout: the loss against brute-force references, the L2 term, the input dropout."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from robustbnn.config import override
from robustbnn.models import MODELS
from robustbnn.models.bbalpha import BBAlphaDropout, bbalpha_loss
from tests._helpers import seeded
from tests._toys import build, draw_dropout_samples, dropout_masks

K, B, C = 10, 6, 7
NAMES = ("bbalpha_0", "bbalpha_05", "bbalpha_1")


def _logits(k: int = K, scale: float = 3.0) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(k, B, C, dtype=torch.float64) * scale, torch.randint(0, C, (B,))


def _reference(logits: torch.Tensor, y: torch.Tensor, alpha: float) -> float:
    """Li & Gal eq. 9 term, straight from the formula: mean_n −(1/α) log mean_k p_kn(y_n)^α."""
    z = logits.numpy()
    p = np.exp(z - z.max(-1, keepdims=True))
    p = p / p.sum(-1, keepdims=True)  # (K, B, C)
    py = p[:, np.arange(z.shape[1]), y.numpy()]  # (K, B)
    return float(np.mean(-np.log(np.mean(py**alpha, axis=0)) / alpha))


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.5, 1.0, 2.0])
def test_k1_equals_the_vi_loss_for_any_alpha(alpha: float) -> None:
    logits, y = _logits(k=1)
    torch.testing.assert_close(bbalpha_loss(logits, y, alpha), F.cross_entropy(logits[0], y))


def test_alpha_zero_is_the_mean_cross_entropy_of_the_k_passes() -> None:
    logits, y = _logits()
    ce = np.mean([F.cross_entropy(logits[k], y).item() for k in range(K)])
    assert bbalpha_loss(logits, y, 0.0).item() == pytest.approx(ce, rel=1e-12)


def test_small_alpha_tends_to_the_vi_loss() -> None:
    logits, y = _logits()
    vi = bbalpha_loss(logits, y, 0.0).item()
    assert bbalpha_loss(logits, y, 1e-4).item() == pytest.approx(vi, abs=1e-3)
    # ... and α matters: the α = 0.5 value is far from it (Jensen: BB-α ≤ VI for α > 0).
    assert bbalpha_loss(logits, y, 0.5).item() < vi - 0.05


def test_alpha_one_is_the_predictive_nll() -> None:
    logits, y = _logits()
    probs = logits.softmax(-1).mean(0)  # (B, C): the MC predictive
    nll = -probs[torch.arange(B), y].log().mean().item()
    assert bbalpha_loss(logits, y, 1.0).item() == pytest.approx(nll, rel=1e-10)


@pytest.mark.parametrize("alpha", [0.5, 1.0, 1.7])
def test_matches_the_power_form_of_eq_9(alpha: float) -> None:
    logits, y = _logits()
    assert bbalpha_loss(logits, y, alpha).item() == pytest.approx(
        _reference(logits, y, alpha), rel=1e-10
    )


def test_stable_for_confident_wrong_predictions() -> None:
    logits, y = _logits(scale=300.0)
    out = bbalpha_loss(logits.float(), y, 0.5)
    assert torch.isfinite(out)
    assert out.item() == pytest.approx(bbalpha_loss(logits, y, 0.5).item(), rel=1e-5)


def test_registered_names_carry_their_alpha_and_take_overrides() -> None:
    for name, alpha in zip(NAMES, (0.0, 0.5, 1.0), strict=True):
        cfg = MODELS.get(name).config()
        assert cfg.alpha == alpha
        assert (cfg.k_train, cfg.p, cfg.input_p, cfg.l2) == (10, 0.5, 0.5, 1e-6)
        assert override(cfg, "alpha", "0.25", owner=name).alpha == 0.25
        assert build(name, alpha=0.25).alpha == 0.25


def _model(**changes: object) -> BBAlphaDropout:
    return build("bbalpha_05", **changes)  # type: ignore[return-value]


def test_loss_is_the_energy_of_k_passes_plus_l2() -> None:
    model = _model(k_train=4, l2=0.1)  # the loss draws a mask per example, as sample_logits
    x, y = torch.rand(B, 1, 6, 7), torch.randint(0, 7, (B,))
    logits = model.sample_logits(x, 4, generator=seeded(5))
    penalty = sum(layer.weight.square().sum() for layer in model.layers)
    expected = bbalpha_loss(logits, y, 0.5) + 0.1 * penalty
    torch.testing.assert_close(model.loss(x, y, n_train=100, generator=seeded(5)), expected)


def test_l2_is_on_weights_only() -> None:
    model = _model(l2=0.1)
    penalty = model.weight_penalty()
    by_hand = sum((layer.weight.detach() ** 2).sum() for layer in model.layers)
    torch.testing.assert_close(penalty.detach(), by_hand)
    penalty.backward()
    for layer in model.layers:
        torch.testing.assert_close(layer.weight.grad, 2 * layer.weight.detach())
        assert layer.bias.grad is None
    x, y = torch.rand(B, 1, 6, 7), torch.randint(0, 7, (B,))
    with_l2 = model.loss(x, y, n_train=100, generator=seeded(1))
    model.l2 = 0.0
    torch.testing.assert_close(with_l2 - model.loss(x, y, n_train=100, generator=seeded(1)),
                               0.1 * by_hand)


def test_cnn_l2_includes_conv_weights() -> None:
    model = _model(arch="cnn")
    convs = sum((c.weight.detach() ** 2).sum() for c in model.features.convs)
    dense = sum((layer.weight.detach() ** 2).sum() for layer in model.layers)
    torch.testing.assert_close(model.weight_penalty().detach(), convs + dense)


@pytest.mark.parametrize("mode", ["per_sample", "per_example"])
def test_input_dropout_is_applied(mode: str) -> None:
    model = _model(p=0.0)  # only the input mask is random
    x = torch.rand(B, 1, 6, 7)
    out = draw_dropout_samples(model, mode, x, 3, seeded(2))
    assert not torch.equal(out[0], out[1])
    mask = dropout_masks(mode, 3, B, 42, 0.5, seeded(2))
    h = x.flatten(1) * mask / 0.5
    for i, layer in enumerate(model.layers):
        h = layer(h)
        h = h.relu() if i < len(model.layers) - 1 else h
    torch.testing.assert_close(out, h)
    assert torch.equal(_model(p=0.0, input_p=0.0).sample_logits(x, 3, generator=seeded(2))[0],
                       _model(p=0.0, input_p=0.0).sample_logits(x, 3, generator=seeded(2))[1])


@pytest.mark.parametrize("name", NAMES)
def test_training_lowers_the_loss(name: str) -> None:
    torch.manual_seed(0)
    x = torch.rand(64, 1, 6, 7)
    y = (x.flatten(1)[:, :21].sum(1) > x.flatten(1)[:, 21:].sum(1)).long()
    model = build(name, num_classes=2, hidden=(32,), p=0.1, input_p=0.1, k_train=3)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    g = seeded(0)
    first = model.loss(x, y, n_train=64, generator=seeded(9)).item()
    for _ in range(40):
        opt.zero_grad()
        model.loss(x, y, n_train=64, generator=g).backward()
        opt.step()
    assert model.loss(x, y, n_train=64, generator=seeded(9)).item() < first - 0.2
    assert math.isfinite(first)
