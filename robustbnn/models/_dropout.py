"""Dropout masks drawn from an explicit generator, independent of train/eval mode.

On CPU, drawing the masks costs more than the matmuls of an MC-dropout pass (docs/protocols.md
§8.6). ``torch.rand`` spends one 32-bit Mersenne-Twister draw and a float conversion per
element; when the drop rate is a multiple of 1/256 (0.25, ...) a mask only needs one uniform
byte per element, one full-range 64-bit draw giving eight of them; at p = 1/2, the papers'
rate, it needs one bit, so a 64-bit draw gives sixty-four, and each random byte looks up its
eight 0/1 values in a 256-row table. ``benchmarks/bench_dropout.py`` measures the gain.

Masks are applied by multiplying with a float 0/1 mask that the comparison writes directly
(``torch.ge(..., out=float)``): on 2 CPU cores ``torch.where(bool, h, 0)`` took four times as
long as a multiplication (36 against 9 ms for 6.4 million elements). Callers that feed the
dropped activations into a linear layer fold the 1/(1 − p) rescaling into that layer's GEMM
(``addmm``'s ``alpha``) instead of spending a pass on it.
"""

from __future__ import annotations

import functools
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

    The draws of :func:`keep_weights` (the same ones under the same generator state): one
    random bit per element at p = 1/2, a uniform byte compared with 256·p at other multiples
    of 1/256 (so an element is kept with probability exactly 1 − p), else ``torch.rand``.

    Args:
        shape: Shape of the mask.
        p: Drop rate in [0, 1).
        generator: Source of the mask.
        device: Device of the mask.

    Returns:
        ``True`` where the element is kept, shape ``shape``.
    """
    return keep_weights(shape, p, generator=generator, device=device, dtype=torch.uint8).bool()


_BIT_VALUES = torch.tensor([1, 2, 4, 8, 16, 32, 64, 128], dtype=torch.uint8)


@functools.lru_cache(maxsize=16)
def _bit_table(dtype: torch.dtype, device: torch.device) -> Tensor:
    """Row b holds the eight bits of byte b, lowest first, as 0/1 of ``dtype``: (256, 8)."""
    byte = torch.arange(256, dtype=torch.uint8).unsqueeze(-1)
    return byte.bitwise_and(_BIT_VALUES).ne(0).to(dtype=dtype, device=device)


def keep_weights(
    shape: tuple[int, ...] | torch.Size,
    p: float,
    *,
    generator: torch.Generator | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype = torch.float32,
) -> Tensor:
    """A float tensor of 0s and 1s, each 1 with probability 1 − p, independently.

    At p = 1/2 (every dropout rate of the papers) each element costs one random bit, unpacked
    from uniform bytes: an eighth of the generator's work for a byte mask. Other multiples of
    1/256 compare a uniform byte with 256·p, as :func:`keep_mask`; other rates ``torch.rand``.
    The comparison writes the floats itself, so the mask costs one pass over its elements.
    """
    device = torch.device("cpu") if device is None else torch.device(device)
    n = math.prod(shape)
    if p == 0.5:  # one random bit per element: every bit of a uniform 64-bit word is fair
        packed = _random_bytes(-(-n // 8), generator, device)  # (ceil(n / 8),)
        # Each byte looks up its eight 0/1 values: one gather of 32-byte rows, 3-4x faster
        # than unpacking with a bitwise AND and a comparison (benchmarks/bench_dropout.py).
        rows = _bit_table(dtype, device).index_select(0, packed.int())  # (ceil(n / 8), 8)
        return rows.view(-1)[:n].view(shape)
    out = torch.empty(shape, dtype=dtype, device=device)
    q = p * 256
    if 0 < q < 256 and q == int(q):
        return torch.ge(_random_bytes(n, generator, device).view(shape), int(q), out=out)
    return torch.ge(torch.rand(shape, generator=generator, device=device), p, out=out)


def check_rate(p: float) -> None:
    """Raise ``ValueError`` unless the drop rate ``p`` is in [0, 1)."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout rate must be in [0, 1), got {p}")


def drop(h: Tensor, p: float, generator: torch.Generator | None, *,
         inplace: bool = False) -> Tensor:
    """``h`` times a fresh 0/1 keep mask (rate ``p``), **not** rescaled by 1/(1 − p).

    ``h`` may be an expanded view, e.g. (B, H) broadcast to (S, B, H); the result is
    materialised with the mask's shape. ``inplace`` multiplies into ``h`` itself (a tensor of
    its own that autograd does not need): the same values, one allocation fewer.
    """
    check_rate(p)
    if p == 0.0:
        return h
    mask = keep_weights(h.shape, p, generator=generator, device=h.device, dtype=h.dtype)
    return h.mul_(mask) if inplace else h * mask


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
