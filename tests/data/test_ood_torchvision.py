"""Fashion-MNIST and KMNIST test images on tiny torchvision-layout fixtures (no network)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torchvision.datasets

from robustbnn.data import write_idx
from robustbnn.data._ood import md5_file
from robustbnn.data.fashion_mnist import FASHION_MNIST
from robustbnn.data.kmnist import KMNIST
from robustbnn.errors import DataError
from tests.data._ood_fixtures import assert_missing

# name -> (set, our folder, torchvision class, md5 in docs/provenance.md)
SETS = {
    "fashion_mnist": (FASHION_MNIST, "fashion_mnist", "FashionMNIST",
                      "bef4ecab320f06d8554ea6380940ec79"),
    "kmnist": (KMNIST, "kmnist", "KMNIST", "5c965bf0a639b31b8f53240b1b52f4d7"),
}
IMAGES = "t10k-images-idx3-ubyte.gz"


def write_images(folder, n=6, seed=0):
    images = np.random.default_rng(seed).integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    folder.mkdir(parents=True, exist_ok=True)
    write_idx(folder / IMAGES, images)
    return images, {IMAGES: md5_file(folder / IMAGES)}


@pytest.mark.parametrize("name", SETS)
def test_md5_matches_torchvision_and_provenance(name):
    spec, _, tv_class, md5 = SETS[name]
    resources = dict(getattr(torchvision.datasets, tv_class).resources)
    assert spec.digests == {IMAGES: resources[IMAGES]} == {IMAGES: md5}


@pytest.mark.parametrize("layout", ["ours", "torchvision"])
@pytest.mark.parametrize("name", SETS)
def test_load(tmp_path, name, layout):
    spec, folder, tv_class, _ = SETS[name]
    sub = folder if layout == "ours" else f"{tv_class}/raw"
    images, sums = write_images(tmp_path / sub)
    assert spec.available(tmp_path)
    x = spec.load(tmp_path, checksums=sums)
    assert x.shape == (6, 1, 28, 28) and x.dtype == torch.float32
    assert torch.equal(x[:, 0], torch.from_numpy(images).float() / 255)
    assert torch.equal(spec.load(tmp_path, 4, checksums=sums), x[:4])
    assert torch.equal(spec.load(tmp_path, preprocessing="bhn_reference", checksums=sums), x)


@pytest.mark.parametrize("name", SETS)
def test_default_md5_rejects_fixture(tmp_path, name):
    spec, folder, _, md5 = SETS[name]
    _, sums = write_images(tmp_path / folder)
    with pytest.raises(DataError) as info:
        spec.load(tmp_path)
    message = str(info.value)
    assert f"checksum mismatch for {tmp_path / folder / IMAGES}: expected md5 {md5}, " \
           f"got {sums[IMAGES]}" in message and "--download" in message


@pytest.mark.parametrize("name", SETS)
def test_missing_files(tmp_path, name):
    spec, folder, tv_class, _ = SETS[name]
    assert_missing(spec, tmp_path,
                   f"no {IMAGES} in {tmp_path / folder} or {tmp_path / tv_class / 'raw'}")


def test_uncompressed_only_is_named(tmp_path):
    folder = tmp_path / "FashionMNIST" / "raw"
    folder.mkdir(parents=True)
    write_idx(folder / "t10k-images-idx3-ubyte", np.zeros((2, 28, 28), dtype=np.uint8))
    with pytest.raises(DataError, match="found .*t10k-images-idx3-ubyte, but the checksum is "
                                        "known for the .gz only"):
        FASHION_MNIST.load(tmp_path)


def test_wrong_shape(tmp_path):
    folder = tmp_path / "kmnist"
    folder.mkdir()
    write_idx(folder / IMAGES, np.zeros((2, 32, 32), dtype=np.uint8))
    with pytest.raises(DataError, match=r"shape \(N, 28, 28\), got uint8 \(2, 32, 32\)"):
        KMNIST.load(tmp_path, checksums={IMAGES: md5_file(folder / IMAGES)})


@pytest.mark.parametrize("name", SETS)
def test_download_fetches_into_our_folder(tmp_path, mirror, name):
    spec, folder, tv_class, _ = SETS[name]
    images, sums = write_images(mirror.root / folder, n=3)
    assert spec.load(tmp_path, download=True, checksums=sums).shape == (3, 1, 28, 28)
    assert mirror.requests == [f"/{folder}/{IMAGES}"]
    assert [p.name for p in (tmp_path / folder).iterdir()] == [IMAGES]


@pytest.mark.parametrize("name", SETS)
def test_download_sources_are_torchvisions_mirrors(name):
    spec, folder, tv_class, md5 = SETS[name]
    remote = spec.remote(spec.digests)
    assert remote.urls == tuple(m + IMAGES for m in getattr(torchvision.datasets,
                                                             tv_class).mirrors)
    assert (remote.folder, remote.digest) == (folder, md5)


@pytest.mark.parametrize("name", SETS)
def test_download_failure_is_a_data_error(tmp_path, mirror, name):
    spec, folder, _, _ = SETS[name]
    with pytest.raises(DataError) as info:
        spec.load(tmp_path, download=True)
    message = str(info.value)
    assert message.startswith(f"could not download {spec.title} {IMAGES} ($ROBUSTBNN_MIRROR "
                              f"is set): {mirror.url}/{folder}/{IMAGES}: HTTP 404")
    assert str(tmp_path / folder) in message and "\n" not in message
    assert list((tmp_path / folder).iterdir()) == []
