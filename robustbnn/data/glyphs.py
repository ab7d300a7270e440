"""Generated letters A–J in the fonts that ship with matplotlib: a notMNIST-like set, embedded.

This is *not* notMNIST: it imitates its idea (letters A–J in many typefaces, 28×28) with the
21 DejaVu, STIX and Computer Modern text fonts in matplotlib's ``mpl-data/fonts/ttf``, so it
needs no download. Use it where the notMNIST files are missing, and say so in reports.

Image i is letter ``"ABCDEFGHIJ"[i % 10]`` drawn white on black (like MNIST), with a font,
size, rotation and shift drawn from ``numpy.random.default_rng([seed, i])``, so image i is the
same whatever the order or number of images requested (docs/pitfalls.md §1.11). Glyph outlines
come from ``matplotlib.textpath.TextPath`` (the font's own curves, not a FreeType bitmap),
are filled even-odd and rasterised with 4×4 supersampling, so pixel values are coverages in
[0, 1]. The result depends on the font files of the installed matplotlib.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from robustbnn.data._ood import check_preprocessing, generated_count
from robustbnn.errors import DataError

LETTERS = "ABCDEFGHIJ"
SIZE = 28
FONT_FILES: tuple[str, ...] = (
    "DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSans-Oblique.ttf",
    "DejaVuSans-BoldOblique.ttf", "DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf",
    "DejaVuSansMono-Oblique.ttf", "DejaVuSansMono-BoldOblique.ttf", "DejaVuSerif.ttf",
    "DejaVuSerif-Bold.ttf", "DejaVuSerif-Italic.ttf", "DejaVuSerif-BoldItalic.ttf",
    "STIXGeneral.ttf", "STIXGeneralBol.ttf", "STIXGeneralItalic.ttf", "STIXGeneralBolIta.ttf",
    "cmr10.ttf", "cmb10.ttf", "cmss10.ttf", "cmti10.ttf", "cmtt10.ttf",
)
GLYPH_PX = (16.0, 25.0)  # longest side of the glyph's box, in pixels
ROTATION_DEG = 12.0  # rotation drawn from U(-12, 12) degrees
SHIFT_PX = 2.0  # shift drawn from U(-2, 2) pixels on each axis
_SUPERSAMPLE = 4


def font_path(name: str) -> Path:
    """Path of a font file in matplotlib's ``mpl-data/fonts/ttf``.

    Raises:
        DataError: If matplotlib does not have it.
    """
    import matplotlib

    path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name
    if not path.is_file():
        raise DataError(f"matplotlib has no font {path}; reinstall it "
                        "(pip install --force-reinstall 'matplotlib>=3.7')")
    return path


@lru_cache(maxsize=len(FONT_FILES) * len(LETTERS))
def _outline(font: str, letter: str) -> tuple[np.ndarray, ...]:
    """Closed polygons of a glyph, centred on its box, longest side 1, y pointing down."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextPath

    path = TextPath((0, 0), letter, size=100, prop=FontProperties(fname=font_path(font)))
    polys = [np.asarray(p, dtype=np.float64) for p in path.to_polygons(closed_only=True)]
    pts = np.concatenate(polys)
    lo, hi = pts.min(0), pts.max(0)
    centre, scale = (lo + hi) / 2, float((hi - lo).max())
    return tuple((p - centre) / scale * np.array([1.0, -1.0]) for p in polys)


@lru_cache(maxsize=1)
def _sample_points() -> np.ndarray:
    """Centres of the supersampled sub-pixels, shape (SIZE²·s², 2) as (x, y)."""
    g = (np.arange(SIZE * _SUPERSAMPLE) + 0.5) / _SUPERSAMPLE
    xs, ys = np.meshgrid(g, g)
    return np.column_stack([xs.ravel(), ys.ravel()])


def render_glyph(font: str, letter: str, *, size_px: float, rotation_deg: float,
                 shift: tuple[float, float]) -> np.ndarray:
    """Rasterise one letter, white on black.

    Args:
        font: A file name from :data:`FONT_FILES`.
        letter: The character to draw.
        size_px: Longest side of the glyph's box before rotation, in pixels.
        rotation_deg: Counter-clockwise rotation about the image centre.
        shift: (dx, dy) offset of the glyph's centre from the image centre, in pixels.

    Returns:
        float32 array (28, 28) of ink coverage in [0, 1].
    """
    from matplotlib.path import Path as MplPath

    t = np.deg2rad(rotation_deg)
    # y points down in the image, so a counter-clockwise turn uses the transposed rotation.
    rot = size_px * np.array([[np.cos(t), np.sin(t)], [-np.sin(t), np.cos(t)]])
    centre = np.array([SIZE / 2 + shift[0], SIZE / 2 + shift[1]])
    points = _sample_points()
    inside = np.zeros(len(points), dtype=bool)
    for poly in _outline(font, letter):
        inside ^= MplPath(poly @ rot.T + centre).contains_points(points)  # even-odd fill
    s = _SUPERSAMPLE
    return inside.reshape(SIZE, s, SIZE, s).mean(axis=(1, 3)).astype(np.float32)


def glyph_params(i: int, seed: int) -> dict[str, Any]:
    """Font, letter, size, rotation and shift of image ``i``, from ``default_rng([seed, i])``."""
    rng = np.random.default_rng([seed, i])
    return {
        "font": FONT_FILES[int(rng.integers(len(FONT_FILES)))],
        "letter": LETTERS[i % len(LETTERS)],
        "size_px": float(rng.uniform(*GLYPH_PX)),
        "rotation_deg": float(rng.uniform(-ROTATION_DEG, ROTATION_DEG)),
        "shift": tuple(float(v) for v in rng.uniform(-SHIFT_PX, SHIFT_PX, size=2)),
    }


def load_glyphs(
    data_root: Path | None = None,
    n: int = 0,
    *,
    seed: int = 0,
    preprocessing: str = "unit",
    download: bool = False,
) -> Tensor:
    """Generate ``n`` letter images (10,000 when ``n <= 0``); image i depends on (seed, i) only.

    Args:
        data_root: Ignored (embedded set).
        n: Number of images; 10,000 when ``n <= 0``.
        seed: Seed of the per-image variation.
        preprocessing: ``"unit"`` gives [0, 1]; ``"bhn_reference"`` gives [-0.5, 0.5], the
            scale the reference fed notMNIST, so the set can stand in for notMNIST under both.
        download: Ignored.

    Returns:
        float32 tensor of shape (N, 1, 28, 28).

    Raises:
        ConfigError: If ``preprocessing`` is unknown.
        DataError: If a matplotlib font file is missing.
    """
    check_preprocessing(preprocessing)
    count = generated_count(n)
    imgs = np.stack([render_glyph(**glyph_params(i, seed)) for i in range(count)])
    x = torch.from_numpy(imgs).unsqueeze(1)
    return x - 0.5 if preprocessing == "bhn_reference" else x


def glyphs_available(data_root: Path | None = None) -> bool:
    """True if matplotlib has every font in :data:`FONT_FILES`; ``data_root`` is ignored."""
    try:
        for name in FONT_FILES:
            font_path(name)
    except DataError:
        return False
    return True
