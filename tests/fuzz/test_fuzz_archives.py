"""Fuzz the archive readers: the notMNIST tar.gz and the Omniglot zips.

Each returns images of the documented shape or raises a DataError naming the archive.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from robustbnn.data import sha256_file
from robustbnn.data.notmnist import read_notmnist_archive
from robustbnn.data.omniglot import OMNIGLOT
from tests.data._ood_fixtures import omniglot_image, png_bytes
from tests.fuzz._fuzz import gzipped, mutated, random_bytes, reader_outcome


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("archives")


def _notmnist_tar() -> bytes:
    """An uncompressed tar of three 28x28 letter PNGs and one other file."""
    rng, buf = np.random.default_rng(0), io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name in ("A/a.png", "B/b.png", "J/j.png", "README"):
            data = (png_bytes(rng.integers(0, 256, (28, 28), dtype=np.uint8))
                    if name.endswith(".png") else b"notMNIST")
            info = tarfile.TarInfo(f"notMNIST_small/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


TAR = _notmnist_tar()


def _check_notmnist(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    with reader_outcome(str(path)):
        images = read_notmnist_archive(path)
        assert images.dtype == np.uint8 and images.shape[1:] == (28, 28) and len(images) > 0


@pytest.mark.bench
@given(data=st.one_of(random_bytes, gzipped(random_bytes)))
def test_notmnist_random_bytes(folder: Path, data: bytes) -> None:
    _check_notmnist(folder / "random" / "notMNIST_small.tar.gz", data)


@pytest.mark.bench
@given(data=gzipped(mutated(TAR)))
def test_notmnist_mutated_tar(folder: Path, data: bytes) -> None:
    _check_notmnist(folder / "tar" / "notMNIST_small.tar.gz", data)


@pytest.mark.bench
@given(data=mutated(gzip.compress(TAR, mtime=0)))
def test_notmnist_mutated_gzip(folder: Path, data: bytes) -> None:
    _check_notmnist(folder / "gz" / "notMNIST_small.tar.gz", data)


def _omniglot_zip(compression: int) -> bytes:
    """A zip of two safe-alphabet PNGs (105x105, mode 1) and one unsafe one."""
    rng, buf = np.random.default_rng(0), io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=compression) as zf:
        for key in ("Greek/character01/0001_01.png", "Latin/character02/0002_01.png",
                    "Korean/character01/0003_01.png"):
            zf.writestr(f"images_background_small1/{key}",
                        png_bytes(omniglot_image(rng), mode="1"))
    return buf.getvalue()


ZIPS = {"stored": _omniglot_zip(zipfile.ZIP_STORED),
        "deflated": _omniglot_zip(zipfile.ZIP_DEFLATED)}


def _check_omniglot(root: Path, data: bytes) -> None:
    path = root / "omniglot" / "images_background_small1.zip"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    with reader_outcome(str(path)):
        x = OMNIGLOT.load(root, checksums={path.name: sha256_file(path)})
        assert x.dtype == torch.float32 and x.shape[1:] == (1, 28, 28) and len(x) > 0


@pytest.mark.bench
@given(data=random_bytes)
def test_omniglot_random_bytes(folder: Path, data: bytes) -> None:
    _check_omniglot(folder / "omni_random", data)


@pytest.mark.bench
@given(data=st.one_of(mutated(ZIPS["stored"]), mutated(ZIPS["deflated"])))
def test_omniglot_mutated_zip(folder: Path, data: bytes) -> None:
    _check_omniglot(folder / "omni_mutated", data)


def test_seeds_are_valid(folder: Path) -> None:
    _check_notmnist(folder / "seed" / "notMNIST_small.tar.gz", gzip.compress(TAR))
    assert len(read_notmnist_archive(folder / "seed" / "notMNIST_small.tar.gz")) == 3
    for kind, data in ZIPS.items():
        root = folder / f"seed_{kind}"
        _check_omniglot(root, data)
        path = root / "omniglot" / "images_background_small1.zip"
        assert len(OMNIGLOT.load(root, checksums={path.name: sha256_file(path)})) == 2
