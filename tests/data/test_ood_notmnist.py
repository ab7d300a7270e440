"""The notMNIST OOD loader on tiny IDX and tar.gz fixtures (the real files: test_ood_real.py)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

from robustbnn.data import sha256_file, write_idx
from robustbnn.data.notmnist import (
    NOTMNIST,
    NOTMNIST_SHA256,
    NotMNISTSet,
    read_notmnist_archive,
)
from robustbnn.errors import ConfigError, DataError
from tests.data._ood_fixtures import assert_missing, write_notmnist_tar

# Copied from docs/provenance.md, independently of robustbnn/data/notmnist.py.
OFFICIAL_SHA256 = {
    "t10k-images-idx3-ubyte.gz":
        "70ae9e06201f2827e5b0a3781a3169d735dd2efc69996b9eeaee7f10ed4044d7",
    "t10k-labels-idx1-ubyte.gz":
        "1fa03836e01c862542f8eb83463bb951bebec6fcb3efa28dad748c6b38a9021b",
}
# The tiny fixture archives are neither the original's size nor its image count.
UNCHECKED = NotMNISTSet(archive_bytes=None, archive_images=None)


@pytest.fixture
def idx_images(tmp_path):
    """7 random 28x28 uint8 images written as notmnist/t10k-images-idx3-ubyte.gz."""
    images = np.random.default_rng(0).integers(0, 256, size=(7, 28, 28), dtype=np.uint8)
    path = tmp_path / "notmnist" / "t10k-images-idx3-ubyte.gz"
    path.parent.mkdir()
    write_idx(path, images)
    return images, {path.name: sha256_file(path)}


def test_official_checksums():
    assert NOTMNIST_SHA256 == OFFICIAL_SHA256


def test_idx_unit(tmp_path, idx_images):
    images, sums = idx_images
    assert NOTMNIST.available(tmp_path)
    x = NOTMNIST.load(tmp_path, checksums=sums)
    assert x.shape == (7, 1, 28, 28) and x.dtype == torch.float32
    assert torch.equal(x[:, 0], torch.from_numpy(images).float() / 255)
    assert torch.equal(NOTMNIST.load(tmp_path, 3, checksums=sums), x[:3])  # the first n
    assert len(NOTMNIST.load(tmp_path, -1, checksums=sums)) == 7


def test_idx_bhn_reference_is_centred(tmp_path, idx_images):
    images, sums = idx_images
    x = NOTMNIST.load(tmp_path, preprocessing="bhn_reference", checksums=sums)
    assert torch.allclose(x[:, 0], (torch.from_numpy(images).float() - 127.5) / 255)
    assert x.min() >= -0.5 and x.max() <= 0.5 and x.min() < 0


def test_default_checksum_rejects_fixture(tmp_path, idx_images):
    actual = idx_images[1]["t10k-images-idx3-ubyte.gz"]
    with pytest.raises(DataError) as info:
        NOTMNIST.load(tmp_path)
    message = str(info.value)
    assert f"checksum mismatch for {tmp_path / 'notmnist' / 't10k-images-idx3-ubyte.gz'}: " \
           f"expected sha256 70ae9e06" in message
    assert f"got {actual}" in message and "--download" in message


def test_idx_wrong_shape(tmp_path):
    path = tmp_path / "notmnist" / "t10k-images-idx3-ubyte.gz"
    path.parent.mkdir()
    write_idx(path, np.zeros((2, 32, 32), dtype=np.uint8))
    with pytest.raises(DataError, match=r"shape \(N, 28, 28\), got uint8 \(2, 32, 32\)"):
        NOTMNIST.load(tmp_path, checksums={path.name: sha256_file(path)})


def test_archive_interleaves_letters_and_skips_unreadable(tmp_path, caplog):
    path = tmp_path / "notmnist" / "notMNIST_small.tar.gz"
    written = write_notmnist_tar(path, {"A": 3, "B": 2, "C": 1, "J": 2}, seed=1,
                                 empty=("A/empty.png",))
    caplog.set_level(logging.INFO, logger="robustbnn.data.notmnist")
    x = UNCHECKED.load(tmp_path)
    assert x.shape == (8, 1, 28, 28)
    order = [("A", 0), ("B", 0), ("C", 0), ("J", 0), ("A", 1), ("B", 1), ("J", 1), ("A", 2)]
    expected = np.stack([written[c][k] for c, k in order])
    assert torch.equal(x[:, 0], torch.from_numpy(expected).float() / 255)
    assert "skipped 1 unreadable PNG" in caplog.text and "A/empty.png" in caplog.text
    assert read_notmnist_archive(path).dtype == np.uint8


def test_idx_preferred_over_archive(tmp_path, idx_images):
    write_notmnist_tar(tmp_path / "notmnist" / "notMNIST_small.tar.gz", {"A": 2}, seed=0)
    assert len(NOTMNIST.load(tmp_path, checksums=idx_images[1])) == 7


def test_archive_size_check(tmp_path):
    path = tmp_path / "notmnist" / "notMNIST_small.tar.gz"
    write_notmnist_tar(path, {"A": 1}, seed=0)
    size = path.stat().st_size
    with pytest.raises(DataError, match=f"has {size:,} bytes, expected 8,458,043"):
        NOTMNIST.load(tmp_path)


def test_truncated_archive(tmp_path):
    path = tmp_path / "notmnist" / "notMNIST_small.tar.gz"
    write_notmnist_tar(path, {"A": 4, "B": 4}, seed=0)
    path.write_bytes(path.read_bytes()[:-200])
    with pytest.raises(DataError, match="notMNIST_small.tar.gz: corrupt or truncated archive"):
        UNCHECKED.load(tmp_path)


def test_archive_with_wrong_image_size(tmp_path):
    import io
    import tarfile

    from tests.data._ood_fixtures import png_bytes

    path = tmp_path / "notmnist" / "notMNIST_small.tar.gz"
    path.parent.mkdir()
    data = png_bytes(np.zeros((32, 30), dtype=np.uint8))
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("notMNIST_small/B/x.png")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(DataError, match="B/x.png is 30x32, expected 28x28"):
        UNCHECKED.load(tmp_path)


def test_archive_without_letters(tmp_path):
    path = tmp_path / "notmnist" / "notMNIST_small.tar.gz"
    write_notmnist_tar(path, {"K": 2}, seed=0)
    with pytest.raises(DataError, match="no PNGs in folders A..J"):
        UNCHECKED.load(tmp_path)


def test_missing_files(tmp_path):
    assert_missing(NOTMNIST, tmp_path, str(tmp_path / "notmnist" / "t10k-images-idx3-ubyte.gz"),
                   str(tmp_path / "notmnist" / "notMNIST_small.tar.gz"))


def test_no_download_when_present(tmp_path, idx_images, mirror):
    assert len(NOTMNIST.load(tmp_path, download=True, checksums=idx_images[1])) == 7
    assert mirror.requests == []


def test_download_failure_is_a_data_error(tmp_path, mirror):
    with pytest.raises(DataError) as info:
        NOTMNIST.load(tmp_path, download=True)
    message = str(info.value)
    assert message.startswith("could not download notMNIST t10k-images-idx3-ubyte.gz "
                              f"($ROBUSTBNN_MIRROR is set): {mirror.url}/notmnist/")
    assert str(tmp_path / "notmnist") in message and "\n" not in message
    assert list((tmp_path / "notmnist").iterdir()) == []  # no partial file left behind


def test_unknown_preprocessing(tmp_path, idx_images):
    with pytest.raises(ConfigError, match=r"unknown OOD preprocessing 'zscore'; known: "
                                          r"\['unit', 'bhn_reference'\]"):
        NOTMNIST.load(tmp_path, preprocessing="zscore", checksums=idx_images[1])
