"""Tests for robustbnn.data.folder: the ``folder:PATH`` OOD set."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

from robustbnn.data.folder import load_folder, parse_folder
from robustbnn.data.ood_sets import check_ood_name, load_ood
from robustbnn.errors import DataError, UnknownNameError


def test_converts_to_luma_28x28_unit_range_in_relative_path_order(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    Image.new("RGB", (56, 42), (255, 0, 0)).save(tmp_path / "b" / "red.png")
    Image.new("RGB", (10, 10), (0, 0, 255)).save(tmp_path / "a.JPG", quality=100)
    Image.new("L", (28, 28), 255).save(tmp_path / "c.bmp")
    (tmp_path / "notes.txt").write_text("not an image")
    x = load_ood(f"folder:{tmp_path}", 0, seed=5)
    assert x.shape == (3, 1, 28, 28) and x.dtype == torch.float32
    # Sorted by relative path: a.JPG, b/red.png, c.bmp; luma 601-2 of pure blue and red.
    np.testing.assert_allclose(x[:, 0].mean(dim=(1, 2)).numpy(),
                               [29 / 255, 76 / 255, 1.0], atol=2 / 255)
    assert torch.equal(load_folder(tmp_path, 2), x[:2])


def test_empty_missing_and_undecodable_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="holds no image file"):
        load_folder(tmp_path)
    with pytest.raises(DataError, match="is not a folder"):
        load_folder(tmp_path / "nope")
    (tmp_path / "broken.png").write_bytes(b"not a png")
    with pytest.raises(DataError, match=re.escape(f"cannot decode {tmp_path / 'broken.png'}")):
        load_folder(tmp_path)


def test_names() -> None:
    assert parse_folder("folder:x/y") == Path("x/y") and parse_folder("uniform") is None
    check_ood_name("folder:anything")
    with pytest.raises(UnknownNameError):
        check_ood_name("no_such_set")
