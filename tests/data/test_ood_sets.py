"""The OOD_DATASETS registry: one contract for every set, checked on tiny fixture files."""

from __future__ import annotations

import pytest
import torch

from robustbnn.data import sha256_file, write_idx
from robustbnn.data.cifar10bw import CIFAR10BW_DIGESTS
from robustbnn.data.fashion_mnist import FASHION_MNIST
from robustbnn.data.kmnist import KMNIST
from robustbnn.data.noise import gaussian_noise, uniform_noise
from robustbnn.data.notmnist import NOTMNIST_SHA256
from robustbnn.data.omniglot import OMNIGLOT_DIGESTS
from robustbnn.data.ood_sets import OOD_DATASETS, PREPROCESSINGS, load_ood
from robustbnn.errors import ConfigError, DataError, UnknownNameError
from tests._registrations import ROOT, registered_in
from tests.data._ood_fixtures import write_cifar_sprite, write_omniglot_zip

NAMES = OOD_DATASETS.names()
GENERATED = {"uniform", "gaussian", "glyphs"}


@pytest.fixture
def ood_root(tmp_path, monkeypatch):
    """A data root with a few images of every file-based set; defaults accept the fixtures."""
    import numpy as np

    rng = np.random.default_rng(0)
    path = tmp_path / "notmnist" / "t10k-images-idx3-ubyte.gz"
    path.parent.mkdir()
    write_idx(path, rng.integers(0, 256, size=(5, 28, 28), dtype=np.uint8))
    monkeypatch.setitem(NOTMNIST_SHA256, path.name, sha256_file(path))

    path = tmp_path / "omniglot" / "images_background_small1.zip"
    write_omniglot_zip(path, "images_background_small1", {"Greek": 3}, seed=0)
    monkeypatch.setitem(OMNIGLOT_DIGESTS, path.name, sha256_file(path))

    path = tmp_path / "cifar10" / "cifar10_batch_0.png"
    images = rng.integers(0, 256, size=(4, 32, 32, 3), dtype=np.uint8)
    monkeypatch.setitem(CIFAR10BW_DIGESTS, path.name, write_cifar_sprite(path, images))

    for tv_set, folder in ((FASHION_MNIST, "FashionMNIST/raw"), (KMNIST, "kmnist")):
        path = tmp_path / folder / "t10k-images-idx3-ubyte.gz"
        path.parent.mkdir(parents=True)
        write_idx(path, rng.integers(0, 256, size=(4, 28, 28), dtype=np.uint8))
        monkeypatch.setitem(tv_set.digests, path.name, sha256_file(path))
    return tmp_path


def test_names_and_specs():
    assert NAMES == registered_in(ROOT / "robustbnn" / "data" / "ood_sets.py", "OODSpec")
    assert GENERATED < set(NAMES) and {"notmnist", "fashion_mnist", "kmnist"} <= set(NAMES)
    assert PREPROCESSINGS == ("unit", "bhn_reference")
    for name in NAMES:
        spec = OOD_DATASETS.get(name)
        assert spec.name == name and spec.description
        assert spec.embedded == (name in GENERATED)
    assert "not notMNIST" in OOD_DATASETS.get("glyphs").description


@pytest.mark.parametrize("name", NAMES)
def test_contract(ood_root, name):
    spec = OOD_DATASETS.get(name)
    assert spec.available(ood_root)
    x = spec.load(ood_root, 3, seed=0, preprocessing="unit", download=False)
    assert x.shape == (3, 1, 28, 28) and x.dtype == torch.float32
    assert 0.0 <= x.min() and x.max() <= 1.0 and x.std() > 0
    assert torch.equal(spec.load(ood_root, 2, seed=0, preprocessing="unit", download=False),
                       x[:2])
    assert torch.equal(load_ood(name, 3, ood_root), x)
    ref = spec.load(ood_root, 3, seed=0, preprocessing="bhn_reference", download=False)
    assert ref.shape == x.shape and ref.dtype == torch.float32 and torch.isfinite(ref).all()
    other_seed = spec.load(ood_root, 3, seed=1, preprocessing="unit", download=False)
    assert torch.equal(other_seed, x) == (name not in GENERATED)


@pytest.mark.parametrize("name", NAMES)
def test_unknown_preprocessing_fails_before_any_file_access(tmp_path, name):
    with pytest.raises(ConfigError, match="unknown OOD preprocessing 'raw'"):
        OOD_DATASETS.get(name).load(tmp_path, 3, seed=0, preprocessing="raw", download=False)


@pytest.mark.parametrize("name", sorted(set(NAMES) - GENERATED))
def test_missing_files_name_the_ways_out(tmp_path, name):
    spec = OOD_DATASETS.get(name)
    assert not spec.available(tmp_path)
    with pytest.raises(DataError) as info:
        load_ood(name, 3, tmp_path)
    message = str(info.value)
    assert str(tmp_path) in message
    assert "--data-root" in message and "ROBUSTBNN_DATA" in message and "--download" in message


def test_noise_sets_wrap_noise_module():
    assert torch.equal(load_ood("uniform", 4, seed=2), uniform_noise(4, seed=2))
    assert torch.equal(load_ood("gaussian", 4, seed=2), gaussian_noise(4, seed=2))
    unclipped = load_ood("gaussian", 4, seed=2, preprocessing="bhn_reference")
    assert torch.equal(unclipped, gaussian_noise(4, seed=2, clip=False))
    assert unclipped.min() < 0 and unclipped.max() > 1
    assert torch.equal(load_ood("uniform", 4, seed=2, preprocessing="bhn_reference"),
                       uniform_noise(4, seed=2))


def test_generated_sets_default_to_10000():
    assert load_ood("uniform", 0).shape == (10000, 1, 28, 28)


def test_unknown_name():
    with pytest.raises(UnknownNameError, match="unknown OOD set 'svhn'; known: "):
        load_ood("svhn", 3)


def test_data_root_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBUSTBNN_DATA", str(tmp_path))
    with pytest.raises(DataError, match=f"neither {tmp_path / 'notmnist'}"):
        load_ood("notmnist", 3)
    monkeypatch.setenv("ROBUSTBNN_DATA", str(tmp_path / "typo"))
    with pytest.raises(DataError, match=r"typo \(from \$ROBUSTBNN_DATA\) does not exist"):
        load_ood("omniglot", 3)
