"""The embedded glyphs set: generated letters A-J, deterministic per (seed, index)."""

from __future__ import annotations

import pytest
import torch

from robustbnn.data.glyphs import (
    FONT_FILES,
    LETTERS,
    font_path,
    glyph_params,
    glyphs_available,
    load_glyphs,
    render_glyph,
)
from robustbnn.data.ood_sets import load_ood
from robustbnn.errors import DataError


def test_shape_range_and_ink():
    x = load_glyphs(None, 13, seed=0)
    assert x.shape == (13, 1, 28, 28) and x.dtype == torch.float32
    assert x.min() == 0.0 and x.max() == 1.0
    ink = x.mean(dim=(1, 2, 3))
    assert (ink > 0.03).all() and (ink < 0.6).all()  # every image has a letter, none is solid
    border = torch.cat([x[..., 0, :], x[..., -1, :], x[..., :, 0], x[..., :, -1]], dim=-1)
    assert border.mean() < x.mean()  # white letters on black, centred


def test_deterministic_per_index():
    a = load_glyphs(None, 12, seed=3)
    assert torch.equal(load_glyphs(None, 12, seed=3), a)
    assert torch.equal(load_glyphs(None, 5, seed=3), a[:5])  # image i does not depend on n
    assert not torch.equal(load_glyphs(None, 12, seed=4), a)


def test_letters_cycle_and_params_vary():
    params = [glyph_params(i, seed=0) for i in range(20)]
    assert "".join(p["letter"] for p in params) == LETTERS * 2
    assert len({p["font"] for p in params}) > 5
    assert len({round(p["rotation_deg"], 6) for p in params}) == 20
    assert glyph_params(7, seed=1) == glyph_params(7, seed=1)


def test_bhn_reference_is_notmnist_scale():
    x = load_glyphs(None, 4, seed=0)
    assert torch.equal(load_glyphs(None, 4, seed=0, preprocessing="bhn_reference"), x - 0.5)


def test_rotation_turns_an_i_on_its_side():
    upright = render_glyph("DejaVuSans.ttf", "I", size_px=20, rotation_deg=0, shift=(0, 0))
    turned = render_glyph("DejaVuSans.ttf", "I", size_px=20, rotation_deg=90, shift=(0, 0))
    assert upright.sum(0).max() > 15 and upright.sum(1).max() < 5  # a vertical bar
    assert turned.sum(1).max() > 15 and turned.sum(0).max() < 5  # a horizontal bar


def test_shift_moves_the_glyph_right_and_down():
    base = render_glyph("DejaVuSans.ttf", "H", size_px=16, rotation_deg=0, shift=(0, 0))
    moved = render_glyph("DejaVuSans.ttf", "H", size_px=16, rotation_deg=0, shift=(3, 2))
    assert torch.equal(torch.from_numpy(moved[2:, 3:]), torch.from_numpy(base[:-2, :-3]))


def test_fonts_ship_with_matplotlib():
    assert glyphs_available()
    assert all(font_path(name).is_file() for name in FONT_FILES)
    with pytest.raises(DataError, match="matplotlib has no font .*Nope.ttf; reinstall"):
        font_path("Nope.ttf")


def test_embedded_ignores_data_root(tmp_path):
    x = load_ood("glyphs", 2, data_root=tmp_path / "does-not-exist", seed=0)
    assert torch.equal(x, load_glyphs(None, 2, seed=0))
