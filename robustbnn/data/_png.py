"""Decode PNG bytes from outside (archives, sprites) with the size checked before decoding.

Pillow is asked for the PNG decoder only (no guessing among its other formats), the image's
declared size is checked before a pixel is decoded (a forged header cannot make it allocate
gigabytes), and every way Pillow reports damaged data becomes one :class:`UnreadablePng`.
"""

from __future__ import annotations

import io
import struct
import warnings
import zlib
from collections.abc import Callable

import numpy as np
from PIL import Image

__all__ = ["MAX_PIXELS", "UnreadablePng", "decode_png"]

MAX_PIXELS = 4096 * 4096  # far above any image read here (the CIFAR sprites are 1024x1000)


class UnreadablePng(Exception):  # noqa: N818 - a reason, turned into a DataError by callers
    """The bytes are not a decodable PNG; the message says why."""


def decode_png(data: bytes, mode: str, *,
               check_size: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Decode PNG ``data`` to a uint8 array in ``mode`` ("L" or "RGB").

    Args:
        data: The file's bytes.
        mode: The Pillow mode to convert to.
        check_size: Called with (width, height) before any pixel is decoded; raises to refuse.

    Returns:
        uint8 array of shape (H, W) for "L", (H, W, 3) for "RGB".

    Raises:
        UnreadablePng: If the bytes are not a PNG, are damaged or truncated, or declare more
            than :data:`MAX_PIXELS` pixels.
        Exception: Whatever ``check_size`` raises.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=["PNG"]) as img:
                width, height = img.size
                if width * height > MAX_PIXELS:
                    raise UnreadablePng(f"declares {width}x{height} pixels, more than "
                                        f"{MAX_PIXELS:,}")
                if check_size is not None:
                    check_size(width, height)
                return np.asarray(img.convert(mode), dtype=np.uint8)
    # Pillow's ways of saying "damaged": OSError (UnidentifiedImageError, truncated data,
    # decoder errors), SyntaxError (bad chunks), ValueError, EOFError, struct/zlib errors, and
    # the decompression-bomb error and warning.
    except (OSError, SyntaxError, ValueError, EOFError, struct.error, zlib.error,
            Image.DecompressionBombError, Image.DecompressionBombWarning) as err:
        raise UnreadablePng(f"{type(err).__name__}: {err}") from err
