"""Dropout masks drawn from an explicit generator, independent of train/eval mode.

On CPU, drawing the masks costs more than the matmuls of an MC-dropout pass (PROTOCOLS.md
§8.6). ``torch.rand`` spends one 32-bit Mersenne-Twister draw and a float conversion per
element; when the drop rate is a multiple of 1/256 (0.5, 0.25, ...) a mask only needs one
uniform byte per element, and one full-range 64-bit draw gives eight of them.
``benchmarks/bench_dropout.py`` measures the gain.

Masks are applied by multiplication with a float 0/1 mask written directly by the comparison
(``torch.ge(..., out=float)``): on CPU ``torch.where(bool, h, 0)`` costs four times a
multiplication (``benchmarks/bench_sampling.py``). Callers that feed the dropped activations
into a linear layer fold the 1/(1 − p) rescaling into that layer's GEMM (``addmm``'s
``alpha``) instead of spending a pass on it.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor


def _random_bytes(n: int, generator: torch.Generator | None, device: torch.device) -> Tensor:
    """``n`` independent bytes, uniform on {0, ..., 255}, shape (n,)."""
    words = torch.empty(-(-n // 8), dtype=torch.int64, device=device)
    # from = int64 min and to = None selects the full 64-bit range: all 8 bytes are uniform.
    words.random_(-(2**63), None, generator=generator)
    return words.view(torch.uint8)[:n]


def keep_mask(
    shape: tuple[int, ...] | torch.Size,
    p: float,
    *,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
) -> Tensor:
    """A boolean mask whose elements are independent Bernoulli(1 − p) draws.

    Rates that are multiples of 1/256 compare uniform random bytes with the threshold
    256·p, which keeps an element with probability exactly 1 − p; other rates compare
    ``torch.rand`` with ``p``.

    Args:
        shape: Shape of the mask.
        p: Drop rate in [0, 1).
        generator: Source of the mask.
        device: Device of the mask.

    Returns:
        ``True`` where the element is kept, shape ``shape``.
    """
    device = torch.device("cpu") if device is None else torch.device(device)
    q = p * 256
    if 0 < q < 256 and q == int(q):
        return _random_bytes(math.prod(shape), generator, device).view(shape) >= int(q)
    return torch.rand(shape, generator=generator, device=device) >= p


def keep_weights(
    shape: tuple[int, ...] | torch.Size,
    p: float,
    *,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> Tensor:
    """:func:`keep_mask` as a float tensor of 0s and 1s (the same draws from ``generator``).

    The comparison writes the floats itself, so the mask costs one pass over its bytes.
    """
    device = torch.device("cpu") if device is None else torch.device(device)
    out = torch.empty(shape, dtype=dtype, device=device)
    q = p * 256
    if 0 < q < 256 and q == int(q):
        return torch.ge(_random_bytes(out.numel(), generator, device).view(shape), int(q),
                        out=out)
    return torch.ge(torch.rand(shape, generator=generator, device=device), p, out=out)


def check_rate(p: float) -> None:
    """Raise ``ValueError`` unless the drop rate ``p`` is in [0, 1)."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout rate must be in [0, 1), got {p}")


def drop(h: Tensor, p: float, generator: torch.Generator | None) -> Tensor:
    """``h`` times a fresh 0/1 keep mask (rate ``p``), **not** rescaled by 1/(1 − p).

    ``h`` may be an expanded view, e.g. (B, H) broadcast to (S, B, H); the result is
    materialised with the mask's shape.
    """
    check_rate(p)
    if p == 0.0:
        return h
    return h * keep_weights(h.shape, p, generator=generator, device=h.device, dtype=h.dtype)


def dropout(h: Tensor, p: float, generator: torch.Generator | None) -> Tensor:
    """Inverted dropout with drop rate ``p`` and a fresh mask for every element of ``h``.

    Unlike ``F.dropout`` this ignores ``self.training`` and takes a generator, so MC-dropout
    samples are the same in ``eval()`` and ``train()`` and reproducible under a seed.

    Raises:
        ValueError: When ``p`` is not in [0, 1).
    """
    check_rate(p)
    if p == 0.0:
        return h
    return drop(h, p, generator).mul_(1.0 / (1.0 - p))
