"""notMNIST's archive: fetched over https, verified by sha256 when its digest is known."""

from __future__ import annotations

import shutil

import pytest
import torch
import torchvision.datasets.utils

from robustbnn.data import sha256_file
from robustbnn.data.notmnist import ARCHIVE, ARCHIVE_URL, load_notmnist
from robustbnn.errors import DataError
from tests.data._ood_fixtures import write_notmnist_tar


def test_archive_url_is_https() -> None:
    assert ARCHIVE_URL.startswith("https://")


@pytest.fixture
def served(tmp_path, monkeypatch):
    """A fake downloader serving a fixture archive (no network); returns (source, calls)."""
    source = tmp_path / "served.tar.gz"
    write_notmnist_tar(source, {"A": 2, "B": 1}, seed=3)
    calls = []

    def fake_download_url(url, root, filename=None, md5=None):
        calls.append(url)
        shutil.copy(source, f"{root}/{filename}")

    monkeypatch.setattr(torchvision.datasets.utils, "download_url", fake_download_url)
    return source, calls


def test_download_verified_by_sha256_not_size(tmp_path, served):
    source, calls = served
    root = tmp_path / "root"
    root.mkdir()
    # archive_bytes is wrong on purpose: with a sha256 known, the size is not what decides
    x = load_notmnist(root, download=True, checksums={ARCHIVE: sha256_file(source)},
                      archive_bytes=1)
    assert calls == [ARCHIVE_URL] and x.shape == (3, 1, 28, 28)


def test_download_with_wrong_sha256_is_refused(tmp_path, served):
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(DataError, match=r"checksum mismatch for .*notMNIST_small.tar.gz: "
                                        r"expected sha256 0{64}, got "):
        load_notmnist(root, download=True, checksums={ARCHIVE: "0" * 64})


def test_same_size_archive_with_other_content_is_refused(tmp_path):
    """An archive of other content is refused by its sha256, whatever its size."""
    path = tmp_path / "notmnist" / ARCHIVE
    write_notmnist_tar(path, {"A": 2}, seed=0)
    good = sha256_file(path)
    write_notmnist_tar(path, {"A": 2}, seed=1)  # same layout, other pixels
    with pytest.raises(DataError, match="checksum mismatch"):
        load_notmnist(tmp_path, checksums={ARCHIVE: good}, archive_bytes=path.stat().st_size)
    assert torch.is_tensor(load_notmnist(tmp_path, checksums={ARCHIVE: sha256_file(path)}))
