"""The real OOD files from ``$ROBUSTBNN_DATA`` (e.g. ``ROBUSTBNN_DATA=../shared/data``).

Each test skips unless the variable is set and that set's files are under it. Counts are
those of the shared data folder (docs/provenance.md): the 10k notMNIST IDX sample, the two
Omniglot background-small zips and the four CIFAR-10 sprites; a full Omniglot background zip
or the CIFAR-10 test batch changes the counts, which the tests then derive instead.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest
import torch

from robustbnn.data.omniglot import BACKGROUND_ALPHABETS, SAFE_ALPHABETS
from robustbnn.data.ood_sets import OOD_DATASETS, load_ood


def data_root(name: str) -> Path:
    root = os.environ.get("ROBUSTBNN_DATA")
    if not root:
        pytest.skip("ROBUSTBNN_DATA is not set; point it at a folder like shared/data")
    if not OOD_DATASETS.get(name).available(Path(root)):
        pytest.skip(f"no {name} files under {root}")
    return Path(root)


def test_real_notmnist():
    root = data_root("notmnist")
    x = load_ood("notmnist", 0)
    assert x.shape == (10000, 1, 28, 28) and x.dtype == torch.float32
    assert x.min() == 0.0 and x.max() == 1.0
    assert abs(x.mean().item() * 255 - 108.79) < 0.01  # docs/provenance.md: pixel mean 108.8
    ref = load_ood("notmnist", 1000, root, preprocessing="bhn_reference")
    assert ref.min() == -0.5 and ref.max() == 0.5 and torch.equal(ref, x[:1000] - 0.5)


@pytest.mark.bench
def test_real_omniglot():
    root = data_root("omniglot")
    zips = sorted(p for sub in ("omniglot", "omniglot-py")
                  for p in (root / sub).glob("images_background*.zip"))
    keys, alphabets = set(), set()
    for path in zips:
        with zipfile.ZipFile(path) as zf:
            for name in zf.namelist():
                parts = name.split("/")
                if name.endswith(".png"):
                    alphabets.add(parts[-3])
                    if parts[-3] in SAFE_ALPHABETS:
                        keys.add("/".join(parts[-3:]))
    assert alphabets <= set(BACKGROUND_ALPHABETS)  # the zips use the names we index
    x = load_ood("omniglot", 0, root)
    assert x.shape == (len(keys), 1, 28, 28)
    if [p.name for p in zips] == ["images_background_small1.zip",
                                  "images_background_small2.zip"]:
        assert len(keys) == 3260  # docs/provenance.md: Balinese, Greek, katakana, Latin, Sanskrit
    assert x.min() == 0.0 and x.max() == 1.0
    assert 0.02 < x.mean() < 0.2  # white strokes on a black background
    assert torch.equal(load_ood("omniglot", 0, root, preprocessing="bhn_reference"), x)


def test_real_cifar10bw():
    root = data_root("cifar10bw")
    x = load_ood("cifar10bw", 0, root)
    has_test_batch = any((root / sub / "cifar-10-batches-py" / "test_batch").is_file()
                         for sub in (".", "cifar10"))
    assert x.shape == (10000 if has_test_batch else 4000, 1, 28, 28)
    assert 0.0 <= x.min() < 0.01 and 0.99 < x.max() <= 1.0
    if not has_test_batch:
        assert abs(x.mean().item() * 255 - 122.5) < 1.0  # docs/provenance.md: grayscale mean 122.5


@pytest.mark.parametrize("name", ["fashion_mnist", "kmnist"])
def test_real_torchvision_sets(name):
    root = data_root(name)
    x = load_ood(name, 0, root)
    assert x.shape == (10000, 1, 28, 28) and x.min() == 0.0 and x.max() == 1.0
