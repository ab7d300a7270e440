"""Figures as ``data:`` URIs, so the HTML report needs no file beside it.

A figure is written twice (``name.png`` and ``name.svg``); the page embeds each figure once, in
the smaller of the two: the PNG, re-encoded with a 256-colour palette (Pillow's fast octree,
lossless for line plots drawn in a few colours, and about a third of matplotlib's RGBA file), or
the SVG as it is. Both go into an ``<img>`` as a base64 ``data:`` URI: an SVG in an ``<img>``
keeps its ids (clip paths, glyphs) to itself, so twenty figures never clash, and it runs no
script. A figure's model is the one whose :func:`robustbnn.results.paths.safe_name` ends its
file stem (``attack_<model>``); the longest such name wins (``mc_dropout`` over ``dropout``).
"""

from __future__ import annotations

import base64
import dataclasses
import io
from collections.abc import Iterable
from pathlib import Path

from robustbnn.report.escape import escape
from robustbnn.report.figures import HEADLINE
from robustbnn.results.paths import UnsafeNameError, safe_name

__all__ = ["Figure", "embed_figures", "figure_html", "figure_models"]

MIME = {".png": "image/png", ".svg": "image/svg+xml"}


@dataclasses.dataclass(frozen=True)
class Figure:
    """One embedded figure.

    Attributes:
        name: The file name embedded (``attack_mlp.png``).
        stem: The figure's name without suffix (``attack_mlp``).
        uri: The ``data:`` URI of the file.
        formats: The suffixes written for this figure (``[".png", ".svg"]``).
    """

    name: str
    stem: str
    uri: str
    formats: tuple[str, ...]


def _palette_png(raw: bytes) -> bytes:
    """``raw`` (a PNG) with a 256-colour palette, or ``raw`` when that is not smaller."""
    try:
        from PIL import Image  # matplotlib's own dependency

        with Image.open(io.BytesIO(raw)) as image:
            image = image.convert("RGBA").quantize(256, method=Image.Quantize.FASTOCTREE)
            out = io.BytesIO()
            image.save(out, "PNG")
    except (OSError, ValueError):  # not a PNG Pillow can read: embed it as it is
        return raw
    return out.getvalue() if out.tell() < len(raw) else raw


def _encoded(path: Path) -> bytes:
    """The bytes embedded for ``path``: a palette PNG, or the SVG as it is."""
    raw = path.read_bytes()
    return _palette_png(raw) if path.suffix.lower() == ".png" else raw


def embed_figures(paths: Iterable[Path]) -> list[Figure]:
    """Each figure of ``paths`` once, in its smaller embedded form, ordered by file stem.

    Args:
        paths: Figure files (``.png`` and ``.svg``; other suffixes and missing files are
            skipped).

    Returns:
        One :class:`Figure` per file stem (per folder).
    """
    by_stem: dict[Path, list[Path]] = {}
    for path in map(Path, paths):
        if path.suffix.lower() in MIME and path.is_file():
            by_stem.setdefault(path.with_suffix(""), []).append(path)
    out = []
    for stem, files in sorted(by_stem.items(), key=lambda item: item[0].name):
        encoded = {f: _encoded(f) for f in sorted(files)}
        best = min(encoded, key=lambda f: (len(encoded[f]), f.suffix))
        uri = (f"data:{MIME[best.suffix.lower()]};base64,"
               + base64.b64encode(encoded[best]).decode("ascii"))
        out.append(Figure(best.name, stem.name, uri, tuple(sorted(f.suffix for f in files))))
    return out


def figure_models(figures: list[Figure], models: Iterable[str]) -> dict[str, str]:
    """Each model-specific figure's model: ``{stem: model}``; headline figures are absent.

    A figure belongs to the model whose safe name, after an ``_``, ends its stem (the longest
    such name); the overview figures of :data:`robustbnn.report.figures.HEADLINE` belong to
    no model.
    """
    safe: dict[str, str] = {}
    for model in models:
        try:
            safe[safe_name(model)] = model
        except UnsafeNameError:  # a name no figure file can carry
            continue
    overview = {Path(h).stem for h in HEADLINE}
    out = {}
    for figure in figures:
        if figure.stem in overview:
            continue
        owners = [s for s in safe if figure.stem.endswith(f"_{s}")]
        if owners:
            out[figure.stem] = safe[max(owners, key=len)]
    return out


def figure_html(figure: Figure) -> str:
    """A ``<figure>`` showing ``figure`` (its file name as the caption and the ``alt`` text)."""
    name = escape(figure.name, to="html")
    return (f'<figure><img src="{figure.uri}" alt="{name}" data-file="{name}">'
            f"<figcaption>{name}</figcaption></figure>\n")
