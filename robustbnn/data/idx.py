"""A small reader and writer for IDX files, the format of MNIST and its relatives.

An IDX file is a 4-byte magic number (two zero bytes, a type code, the number of
dimensions), one big-endian uint32 per dimension, then the values in C order, big-endian.
Files are often gzipped; :func:`read_idx` recognises gzip by its magic bytes.

References:
    LeCun, Cortes & Burges, "The MNIST database of handwritten digits" (file formats section),
    http://yann.lecun.com/exdb/mnist/
"""

from __future__ import annotations

import gzip
import io
import math
import zlib
from pathlib import Path

import numpy as np

from robustbnn.data.root import unreadable
from robustbnn.errors import DataError

# IDX type code -> big-endian numpy dtype.
IDX_DTYPES: dict[int, np.dtype] = {
    0x08: np.dtype("u1"),
    0x09: np.dtype("i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
_GZIP_MAGIC = b"\x1f\x8b"
MAX_BYTES = 1 << 30  # uncompressed IDX payload limit (MNIST's largest file is 47 MB)
_FIX = "delete it and re-download (--download), or point --data-root/ROBUSTBNN_DATA at a good copy"


def _fail(path: Path, problem: str) -> DataError:
    return DataError(f"{path}: {problem}; {_FIX}")


def _read_bytes(path: Path) -> bytes:
    """The file's content, decompressed if it is gzip (at most :data:`MAX_BYTES`)."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise unreadable(path, e) from e
    if not data.startswith(_GZIP_MAGIC):
        return data
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            data = stream.read(MAX_BYTES + 1)  # bounded: a small bomb cannot take all memory
    except EOFError as e:
        raise _fail(path, "gzip stream ends early (truncated download?)") from e
    except (gzip.BadGzipFile, zlib.error, OSError) as e:
        raise _fail(path, f"corrupt gzip data ({e})") from e
    if len(data) > MAX_BYTES:
        raise _fail(path, f"decompresses to more than {MAX_BYTES:,} bytes, far more than any "
                          "dataset this reader serves")
    return data


def read_idx(path: str | Path) -> np.ndarray:
    """Read an IDX file, gzipped or raw.

    Args:
        path: The file, e.g. ``train-images-idx3-ubyte.gz``.

    Returns:
        The array in native byte order, e.g. uint8 of shape (60000, 28, 28).

    Raises:
        DataError: If the file cannot be read, the gzip data is corrupt or truncated, the
            magic number is wrong, or the payload size does not match the dimensions.

    Example:
        >>> import tempfile
        >>> p = Path(tempfile.mkdtemp()) / "a.idx.gz"
        >>> write_idx(p, np.arange(6, dtype=np.uint8).reshape(2, 3))
        >>> read_idx(p).tolist()
        [[0, 1, 2], [3, 4, 5]]
    """
    path = Path(path)
    data = _read_bytes(path)
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise _fail(path, f"not an IDX file (magic {data[:4].hex() or 'missing'}, expected "
                          "00 00 <type> <ndim>)")
    code, ndim = data[2], data[3]
    if code not in IDX_DTYPES:
        raise _fail(path, f"unknown IDX type code 0x{code:02X} "
                          f"(known: {', '.join(f'0x{c:02X}' for c in IDX_DTYPES)})")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise _fail(path, f"truncated IDX header ({len(data)} bytes, need {header})")
    dims = tuple(int(d) for d in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    dtype = IDX_DTYPES[code]
    expected = math.prod(dims) * dtype.itemsize  # Python ints: np.prod would wrap around
    got = len(data) - header
    if got != expected:
        what = "truncated" if got < expected else "has trailing bytes"
        raise _fail(path, f"IDX payload {what}: {got} bytes for shape {dims}, expected {expected}")
    if math.prod(d for d in dims if d) * dtype.itemsize > MAX_BYTES:  # with a 0 among them
        raise _fail(path, f"IDX shape {dims} is too large for any dataset (an empty array "
                          "whose other dimensions exceed what numpy can address)")
    array = np.frombuffer(data, dtype=dtype, offset=header).reshape(dims)
    return array.astype(dtype.newbyteorder("="), copy=True)


def write_idx(path: str | Path, array: np.ndarray) -> None:
    """Write ``array`` as an IDX file, gzipped if ``path`` ends with ``.gz``.

    Args:
        path: Destination file.
        array: Array of a dtype IDX supports (uint8, int8, int16, int32, float32, float64)
            with at least one dimension.

    Raises:
        ValueError: If the dtype or rank cannot be stored in IDX.
    """
    path, array = Path(path), np.asarray(array)
    codes = {dt.newbyteorder("="): code for code, dt in IDX_DTYPES.items()}
    dtype = array.dtype.newbyteorder("=")
    if dtype not in codes or not 1 <= array.ndim <= 255:
        raise ValueError(f"cannot write {array.dtype} array of rank {array.ndim} as IDX")
    header = bytes([0, 0, codes[dtype], array.ndim])
    header += np.asarray(array.shape, dtype=">u4").tobytes()
    payload = header + np.ascontiguousarray(array, dtype=IDX_DTYPES[codes[dtype]]).tobytes()
    if path.name.endswith(".gz"):
        payload = gzip.compress(payload, mtime=0)
    path.write_bytes(payload)
