from __future__ import annotations

import gzip

import numpy as np
import pytest

from robustbnn.data import read_idx, write_idx
from robustbnn.errors import DataError


@pytest.mark.parametrize("dtype", ["u1", "i1", "i2", "i4", "f4", "f8"])
@pytest.mark.parametrize("suffix", [".gz", ""])
def test_round_trip(tmp_path, dtype, suffix):
    x = (np.arange(3 * 5 * 7) - 50).astype(dtype).reshape(3, 5, 7)
    path = tmp_path / f"a-idx3{suffix}"
    write_idx(path, x)
    y = read_idx(path)
    assert y.shape == (3, 5, 7)
    assert y.dtype == x.dtype and y.dtype.isnative
    np.testing.assert_array_equal(y, x)
    assert y.flags.writeable


def test_header_is_big_endian_ubyte(tmp_path):
    path = tmp_path / "a"
    write_idx(path, np.zeros((3, 5, 7), dtype=np.uint8))
    data = path.read_bytes()
    assert data[:16] == bytes([0, 0, 8, 3, 0, 0, 0, 3, 0, 0, 0, 5, 0, 0, 0, 7])
    assert len(data) == 16 + 105


def test_gzip_is_sniffed_not_named(tmp_path):
    x = np.arange(6, dtype=np.uint8)
    write_idx(tmp_path / "a.gz", x)
    (tmp_path / "renamed").write_bytes((tmp_path / "a.gz").read_bytes())
    np.testing.assert_array_equal(read_idx(tmp_path / "renamed"), x)


def _error(path) -> str:
    with pytest.raises(DataError) as info:
        read_idx(path)
    message = str(info.value)
    assert str(path) in message and "re-download" in message and "\n" not in message
    return message


def test_truncated_gzip(tmp_path):
    path = tmp_path / "a.gz"
    write_idx(path, np.random.default_rng(0).integers(0, 256, (3, 5, 7), dtype=np.uint8))
    path.write_bytes(path.read_bytes()[:-20])
    assert "truncated" in _error(path)


def test_truncated_payload(tmp_path):
    path = tmp_path / "a"
    write_idx(path, np.zeros((3, 5, 7), dtype=np.uint8))
    path.write_bytes(path.read_bytes()[:-1])
    assert "truncated: 104 bytes for shape (3, 5, 7), expected 105" in _error(path)


def test_truncated_header(tmp_path):
    path = tmp_path / "a"
    path.write_bytes(bytes([0, 0, 8, 3, 0, 0, 0, 3]))
    assert "truncated IDX header" in _error(path)


def test_trailing_bytes(tmp_path):
    path = tmp_path / "a.gz"
    write_idx(path, np.zeros((3, 5, 7), dtype=np.uint8))
    path.write_bytes(gzip.compress(gzip.decompress(path.read_bytes()) + b"\0"))
    assert "trailing bytes" in _error(path)


def test_bad_magic(tmp_path):
    path = tmp_path / "a"
    path.write_bytes(b"PK\x03\x04" + bytes(100))
    assert "not an IDX file (magic 504b0304" in _error(path)


def test_empty_file(tmp_path):
    path = tmp_path / "a"
    path.write_bytes(b"")
    assert "not an IDX file" in _error(path)


def test_unknown_type_code(tmp_path):
    path = tmp_path / "a"
    path.write_bytes(bytes([0, 0, 0x0A, 1, 0, 0, 0, 0]))
    assert "unknown IDX type code 0x0A" in _error(path)


def test_corrupt_gzip(tmp_path):
    path = tmp_path / "a.gz"
    write_idx(path, np.zeros((3, 5, 7), dtype=np.uint8))
    data = bytearray(path.read_bytes())
    data[12:20] = b"\xff" * 8  # deflate stream garbage, gzip header intact
    path.write_bytes(bytes(data))
    assert "corrupt gzip" in _error(path)


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="cannot read"):
        read_idx(tmp_path / "nope.gz")


def test_write_rejects_unsupported_dtype(tmp_path):
    with pytest.raises(ValueError, match="int64"):
        write_idx(tmp_path / "a", np.zeros(3, dtype=np.int64))
