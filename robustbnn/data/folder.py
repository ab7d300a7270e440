"""``folder:PATH``: a folder of image files as an OOD set, converted to the MNIST shape.

Every file under PATH (recursively) whose suffix is one of :data:`IMAGE_SUFFIXES` (any
case) is an image of the set, in the order of its path relative to PATH (sorted as strings,
so the order does not depend on the file system). Each image is converted the same way:

1. decoded with Pillow (the first frame of an animated GIF);
2. converted to 8-bit grayscale, PIL mode ``"L"`` (ITU-R 601-2 luma,
   L = 0.299 R + 0.587 G + 0.114 B; an alpha channel is dropped, not composited);
3. resized to 28 x 28 with PIL's bilinear filter (``Image.Resampling.BILINEAR``, which
   widens its support when shrinking, so a large image is averaged rather than aliased);
   the aspect ratio is not kept: nothing is cropped or padded;
4. scaled to [0, 1] as value / 255, float32, shape (1, 28, 28).

Both preprocessings (``unit``, ``bhn_reference``) give [0, 1]. The first ``n`` images are
the first ``n`` paths in that order; ``n <= 0`` means all of them. The bench hashes the
loaded tensor into the ids of the cells that score it (:attr:`robustbnn.run.cells.Cell.content`),
so replacing an image recomputes exactly those cells.

Example:
    >>> parse_folder("folder:/data/letters"), parse_folder("uniform")
    (PosixPath('/data/letters'), None)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from robustbnn.errors import DataError

__all__ = ["FOLDER_PREFIX", "IMAGE_SUFFIXES", "folder_name", "load_folder", "parse_folder"]

FOLDER_PREFIX = "folder:"
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif")
SIZE = 28


def folder_name(path: str | Path) -> str:
    """The OOD-set name of the folder ``path``."""
    return f"{FOLDER_PREFIX}{path}"


def parse_folder(name: str) -> Path | None:
    """The folder of a ``folder:PATH`` name, or None for any other name."""
    return Path(name[len(FOLDER_PREFIX):]) if name.startswith(FOLDER_PREFIX) else None


def image_files(path: Path) -> list[Path]:
    """The image files under ``path``, sorted by their path relative to it.

    Raises:
        DataError: If ``path`` is not a folder or holds no image file.
    """
    if not path.is_dir():
        raise DataError(f"OOD set {folder_name(path)}: {path} is not a folder; give "
                        "folder:PATH the path of a folder of images")
    files = sorted((f for f in path.rglob("*")
                    if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES),
                   key=lambda f: f.relative_to(path).as_posix())
    if not files:
        raise DataError(f"OOD set {folder_name(path)}: {path} holds no image file "
                        f"({', '.join(IMAGE_SUFFIXES)}); put images in it or fix the path")
    return files


def _convert(file: Path) -> np.ndarray:
    """One image file as uint8 (28, 28) grayscale."""
    from PIL import Image, UnidentifiedImageError  # noqa: PLC0415 - Pillow on demand

    try:
        with Image.open(file) as image:
            image.seek(0)
            gray = image.convert("L").resize((SIZE, SIZE), Image.Resampling.BILINEAR)
            return np.asarray(gray, dtype=np.uint8)
    except (OSError, UnidentifiedImageError, ValueError) as err:
        raise DataError(f"cannot decode {file} ({type(err).__name__}: {err}); replace or "
                        "remove it from the OOD folder") from None


def load_folder(path: str | Path, n: int = 0) -> Tensor:
    """The images of folder ``path`` as the bench scores them (see the module docstring).

    Args:
        path: The folder.
        n: The first ``n`` images in path order; all when ``n <= 0``.

    Returns:
        float32 tensor of shape (N, 1, 28, 28) in [0, 1].

    Raises:
        DataError: If the folder is missing or empty, or a file cannot be decoded (naming it).
    """
    files = image_files(Path(path))
    files = files[:n] if n > 0 else files
    pixels = np.stack([_convert(f) for f in files])  # (N, 28, 28) uint8
    return torch.from_numpy(pixels).float().div_(255).unsqueeze(1)
