"""MC dropout's per-sample masks: each sample is the sub-network of its kept units.

``attack_logits`` (``attack_masks="per_sample"``) draws one mask per posterior sample for
the whole batch and computes only the kept units (``robustbnn.models._kept_units``);
``sample_logits`` keeps a mask per example. These tests rebuild the same
masks from the same generator and check the pass value for value (and its input gradient)
against the dense network with those masks applied, then check what sharing means: the
examples of one sample see one mask, the samples of one example see independent ones.
The distribution against ``F.dropout`` is in ``test_fast_sampling.py``.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor

from robustbnn.errors import ConfigError
from robustbnn.models._kept_units import kept_unit_pass, kept_units
from tests._helpers import seeded
from tests._toys import build


def dense_with_the_same_masks(model, h: Tensor, p_in: float, blocks: list[int],  # noqa: ANN001
                              seed: int) -> Tensor:
    """The pass written densely: masks rebuilt from ``kept_units`` in the pass's draw order."""
    gen = seeded(seed)
    return torch.cat([_dense_block(model, h, p_in, n, gen) for n in blocks])


def _dense_block(model, h: Tensor, p_in: float, n: int,  # noqa: ANN001
                 gen: torch.Generator) -> Tensor:
    layers = list(model.layers[1:] if model.head_p == 0 else model.layers)

    def mask(width: int, p: float) -> Tensor:  # (S, 1, width) 0/1, from the same draws
        index, valid = kept_units(n, width, p, gen, h.device)
        dense = torch.zeros(n, width, dtype=h.dtype)
        dense.scatter_(1, index, valid.to(h.dtype))
        return dense.unsqueeze(1)

    x = h.expand(n, *h.shape) * mask(h.shape[1], p_in) / (1 - p_in)
    for i, layer in enumerate(layers):
        x = F.linear(x, layer.weight, layer.bias)
        if i < len(layers) - 1:
            x = model.act(x) * mask(layer.out_features, model.p) / (1 - model.p)
    return x


@pytest.mark.parametrize(("name", "p"), [("mc_dropout", 0.5), ("bbalpha_05", 0.5),
                                         ("mc_dropout", 0.25), ("mc_dropout", 0.3)])
def test_pass_equals_the_dense_network_with_the_same_masks(name: str, p: float) -> None:
    model = build(name, hidden=(11, 13, 5), p=p).double()
    x = torch.rand(4, 1, 6, 7, generator=seeded(1), dtype=torch.float64)
    h = x.flatten(1)
    if model.head_p == 0:
        h = model.act(model.layers[0](h))
    p_in = model.head_p or model.p
    layers = model.layers[1:] if model.head_p == 0 else model.layers
    fast = kept_unit_pass(h, layers, model.act, p_in, model.p, [4, 2], seeded(2))
    ref = dense_with_the_same_masks(model, h, p_in, [4, 2], seed=2)
    assert fast.shape == (6, 4, 7)
    torch.testing.assert_close(fast, ref)


def test_input_gradient_equals_the_dense_networks() -> None:
    model = build("bbalpha_05", hidden=(11, 13)).double()  # input dropout: the pixels gathered
    x = torch.rand(5, 42, generator=seeded(1), dtype=torch.float64, requires_grad=True)
    fast = kept_unit_pass(x, model.layers, model.act, 0.5, 0.5, [3], seeded(2))
    (g_fast,) = torch.autograd.grad(fast.logsumexp(-1).sum(), x)
    ref = dense_with_the_same_masks(model, x, 0.5, [3], seed=2)
    (g_ref,) = torch.autograd.grad(ref.logsumexp(-1).sum(), x)
    assert g_fast.abs().sum() > 0
    torch.testing.assert_close(g_fast, g_ref)


def test_a_sample_that_keeps_no_unit_gives_the_bias_path() -> None:
    # p = 255/256 on 13 units: most samples keep nothing, some keep a unit or two.
    model = build("mc_dropout", hidden=(11, 13), p=255 / 256).double()
    h = model.act(model.layers[0](torch.rand(3, 42, generator=seeded(1), dtype=torch.float64)))
    fast = kept_unit_pass(h, model.layers[1:], model.act, model.p, model.p, [50], seeded(2))
    ref = dense_with_the_same_masks(model, h, model.p, [50], seed=2)
    assert torch.isfinite(fast).all()
    torch.testing.assert_close(fast, ref)
    empty = (ref - model.layers[-1].bias).abs().amax((1, 2)) == 0
    assert empty.any(), "the case needs samples that kept no unit"


def test_attack_samples_share_one_mask_per_sample_evaluation_does_not() -> None:
    model = build("mc_dropout")
    x = torch.rand(1, 1, 6, 7, generator=seeded(1)).expand(4, 1, 6, 7)  # one image, 4 times
    per_sample = model.attack_logits(x, 5, generator=seeded(2))  # (S, B, C)
    # Equal up to the GEMM's rounding: a batched GEMM may round identical rows differently
    # by their position in the batch (it does on AVX-512 machines); another mask differs by
    # orders of magnitude more (the assertions below).
    torch.testing.assert_close(per_sample, per_sample[:, :1].expand_as(per_sample),
                               rtol=0, atol=1e-6)
    assert per_sample.var(0).max() > 1e-3  # the samples still differ
    assert model.sample_logits(x, 5, generator=seeded(2)).var(1).max() > 1e-3  # a mask per example
    other = build("mc_dropout", attack_masks="per_example")
    torch.testing.assert_close(other.attack_logits(x, 5, generator=seeded(2)),
                               other.sample_logits(x, 5, generator=seeded(2)), rtol=0, atol=0)


def test_attacks_differentiate_the_attack_samples() -> None:
    from robustbnn.attacks._grad import GradientSettings, mc_input_grad

    model = build("mc_dropout")
    x, y = torch.rand(3, 1, 6, 7, generator=seeded(1)), torch.tensor([0, 3, 6])
    grad = mc_input_grad(model, x, y, GradientSettings(4, "expected"), generator=seeded(2))
    xg = x.clone().requires_grad_(True)
    logits = model.attack_logits(xg, 4, generator=seeded(2))
    (want,) = torch.autograd.grad(F.cross_entropy(logits.flatten(0, 1), y.repeat(4),
                                                  reduction="sum") / 4, xg)
    torch.testing.assert_close(grad, want)


def test_samples_are_reproducible_and_training_keeps_a_mask_per_example() -> None:
    model = build("mc_dropout")
    x = torch.rand(1, 1, 6, 7, generator=seeded(1)).expand(6, 1, 6, 7)
    a = model.attack_logits(x, 3, generator=seeded(2))
    assert torch.equal(a, model.attack_logits(x, 3, generator=seeded(2)))
    assert not torch.equal(a, model.attack_logits(x, 3, generator=seeded(4)))
    logits = model._forward(x, 1, seeded(5), stochastic=True)[0]  # the loss's pass
    assert logits.var(0).max() > 0  # the copies of one image got different masks


def test_kept_units_are_sorted_and_padded_with_dropped_units() -> None:
    index, valid = kept_units(200, 37, 0.5, seeded(0), torch.device("cpu"))
    assert index.shape == valid.shape and index.shape[1] <= 37
    for row, ok in zip(index, valid, strict=True):
        kept = row[ok.bool()]
        assert torch.equal(kept, kept.sort().values)
        assert not set(row[~ok.bool()].tolist()) & set(kept.tolist())
    assert abs(valid.sum(1).mean().item() / 37 - 0.5) < 0.05


def test_unknown_attack_masks_is_one_clear_error() -> None:
    with pytest.raises(ConfigError, match=r"unknown attack_masks 'shared'; known: "
                                          r"\['per_sample', 'per_example'\] \(set it with "
                                          r"--set mc_dropout.attack_masks=per_example\)"):
        build("mc_dropout", attack_masks="shared")


def test_the_error_names_the_model_it_came_from() -> None:
    with pytest.raises(ConfigError, match=r"bbalpha_1: unknown attack_masks 'x'.*--set bbalpha_1"):
        build("bbalpha_1", attack_masks="x")
