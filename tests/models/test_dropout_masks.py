"""Dropout masks: exactly Bernoulli(1 − p), reproducible under a generator, mode-independent."""

from __future__ import annotations

import pytest
import torch

from robustbnn.models._dropout import dropout, keep_mask
from tests._helpers import seeded


# 0.5, 0.25, 1/256 and 255/256 take the random-byte path; 0.3 and 0.001 fall back to rand.
@pytest.mark.parametrize("p", [0.5, 0.25, 1 / 256, 255 / 256, 0.3, 0.001])
def test_keep_rate_is_one_minus_p(p: float) -> None:
    n = 2_000_000
    keep = keep_mask((n,), p, generator=seeded(0))
    assert keep.dtype == torch.bool
    sd = ((1 - p) * p / n) ** 0.5
    assert abs(keep.double().mean().item() - (1 - p)) < 5 * sd


@pytest.mark.parametrize("p", [0.5, 0.25])
def test_neighbouring_elements_are_independent(p: float) -> None:
    # Eight bytes come from one 64-bit draw: neighbours, and every byte position, must not
    # be correlated.
    n = 2_000_000
    keep = keep_mask((n // 8, 8), p, generator=seeded(1)).double()
    sd = (1 / (n // 8)) ** 0.5
    for j in range(8):
        assert abs(keep[:, j].mean().item() - (1 - p)) < 5 * sd * (p * (1 - p)) ** 0.5
    both = (keep[:, :-1] * keep[:, 1:]).mean().item()
    assert abs(both - (1 - p) ** 2) < 5 * (1 / n) ** 0.5


@pytest.mark.parametrize("shape", [(3, 5, 7), (1,), (100, 1000 + 1)])
def test_any_shape_and_reproducible(shape: tuple[int, ...]) -> None:
    a = keep_mask(shape, 0.5, generator=seeded(3))
    assert a.shape == shape
    torch.testing.assert_close(a, keep_mask(shape, 0.5, generator=seeded(3)), rtol=0, atol=0)
    if a.numel() > 64:
        assert not torch.equal(a, keep_mask(shape, 0.5, generator=seeded(4)))


@pytest.mark.parametrize("p", [0.5, 0.3])
def test_dropout_zeroes_or_rescales_and_passes_gradients(p: float) -> None:
    h = (torch.rand(4, 50, dtype=torch.float64) + 0.5).requires_grad_()
    out = dropout(h, p, seeded(0))
    keep = keep_mask(h.shape, p, generator=seeded(0))
    torch.testing.assert_close(out, torch.where(keep, h / (1 - p), 0.0))
    assert out.dtype == torch.float64
    out.sum().backward()
    torch.testing.assert_close(h.grad, keep.double() / (1 - p))


def test_dropout_rate_zero_is_identity_and_bad_rates_raise() -> None:
    h = torch.rand(3, 4)
    assert dropout(h, 0.0, seeded(0)) is h
    for p in (1.0, -0.1):
        with pytest.raises(ValueError, match="dropout rate"):
            dropout(h, p, seeded(0))


@pytest.mark.parametrize("p", [0.5, 0.25, 0.3])
def test_keep_weights_are_fair_zero_one_floats(p: float) -> None:
    from robustbnn.models._dropout import keep_weights

    shape = (37, 11, 13)  # 5,291 elements: not a multiple of 8 or 64
    m = keep_weights(shape, p, generator=torch.Generator().manual_seed(0))
    assert m.shape == shape and m.dtype == torch.float32 and m.is_contiguous()
    assert set(m.unique().tolist()) <= {0.0, 1.0}
    again = keep_weights(shape, p, generator=torch.Generator().manual_seed(0))
    assert torch.equal(m, again)
    big = keep_weights((64_000, 8), p, generator=torch.Generator().manual_seed(1))
    # every bit position of the packed bytes is Bernoulli(1 − p): std error 0.0019 per column
    torch.testing.assert_close(big.mean(0), torch.full((8,), 1 - p), atol=0.01, rtol=0)
    corr = torch.corrcoef(torch.stack([big[:, :-1].flatten(), big[:, 1:].flatten()]))[0, 1]
    assert abs(corr.item()) < 0.01  # neighbouring bits are independent
