"""Fuzz the IDX reader (raw and gzip): valid arrays or a DataError naming the file."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from robustbnn.data.idx import IDX_DTYPES, read_idx, write_idx
from tests.fuzz._fuzz import gzipped, mutated, random_bytes, reader_outcome


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("idx")


def _seed(gz: bool) -> bytes:
    """A small valid IDX file: 3 images of 4x5 uint8."""
    header = bytes([0, 0, 0x08, 3]) + struct.pack(">III", 3, 4, 5)
    raw = header + np.arange(60, dtype=np.uint8).tobytes()
    return gzip.compress(raw, mtime=0) if gz else raw


@st.composite
def headers(draw: st.DrawFn) -> bytes:
    """A structurally plausible header (any type code, rank, dims) and a payload of any size."""
    code = draw(st.sampled_from([*IDX_DTYPES, 0x00, 0x0A, 0xFF]))
    ndim = draw(st.integers(0, 6))
    dims = draw(st.lists(st.sampled_from([0, 1, 2, 3, 28, 65536, 2**31, 2**32 - 1]),
                         min_size=ndim, max_size=ndim))
    payload = draw(st.binary(max_size=256))
    return bytes([0, 0, code, ndim]) + b"".join(struct.pack(">I", d) for d in dims) + payload


def _check(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    with reader_outcome(str(path)):
        array = read_idx(path)
        assert isinstance(array, np.ndarray) and array.dtype.isnative


@given(data=random_bytes)
def test_random_bytes(folder: Path, data: bytes) -> None:
    _check(folder / "random-idx3-ubyte", data)


@pytest.mark.bench
@given(data=gzipped(random_bytes))
def test_random_gzip_payload(folder: Path, data: bytes) -> None:
    _check(folder / "random-idx3-ubyte.gz", data)


@pytest.mark.bench
@given(data=st.one_of(headers(), gzipped(headers())))
def test_structured_headers(folder: Path, data: bytes) -> None:
    _check(folder / "header-idx3-ubyte.gz", data)


@pytest.mark.bench
@given(data=mutated(_seed(gz=False)))
def test_mutated_raw(folder: Path, data: bytes) -> None:
    _check(folder / "mutated-idx3-ubyte", data)


@pytest.mark.bench
@given(data=mutated(_seed(gz=True)))
def test_mutated_gzip(folder: Path, data: bytes) -> None:
    _check(folder / "mutated-idx3-ubyte.gz", data)


def test_seed_files_are_valid(folder: Path) -> None:
    for gz in (False, True):
        path = folder / f"seed{gz}"
        path.write_bytes(_seed(gz))
        assert read_idx(path).shape == (3, 4, 5)
    write_idx(folder / "w.gz", np.zeros((2, 2), np.uint8))
    assert read_idx(folder / "w.gz").shape == (2, 2)
