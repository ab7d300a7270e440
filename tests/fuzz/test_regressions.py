"""Regular tests for the inputs fuzzing (or reading the readers for it) found mishandled."""

from __future__ import annotations

import gzip
import json
import re
import struct
import zlib
from pathlib import Path

import pytest
from torch import nn

from robustbnn.data.cifar10bw import read_sprite
from robustbnn.data.idx import read_idx
from robustbnn.data.mnist5k import read_csv
from robustbnn.errors import DataError, UserError
from robustbnn.report.regression import load_tolerances
from robustbnn.results.schema import Result
from robustbnn.results.store import RunFolderError, read_results
from robustbnn.training import cache


def test_idx_empty_array_with_unaddressable_dims(tmp_path: Path) -> None:
    """Found by test_structured_headers: dims (0, 2**32-1, 2**32-1) hit numpy's ValueError."""
    path = tmp_path / "x-idx3-ubyte"
    path.write_bytes(bytes([0, 0, 8, 3]) + struct.pack(">III", 0, 2**32 - 1, 2**32 - 1))
    with pytest.raises(DataError, match=re.escape(
            f"{path}: IDX shape (0, 4294967295, 4294967295) is too large for any dataset")):
        read_idx(path)


def test_empty_csv_is_an_error_not_a_warning(tmp_path: Path) -> None:
    """Found by test_csv_random: an empty CSV gave numpy's UserWarning and a (0, 1) table."""
    path = tmp_path / "mnist_5k.csv.gz"
    path.write_bytes(gzip.compress(b""))
    with pytest.raises(DataError, match=re.escape(f"{path} holds no rows")):
        read_csv(path)


def _png_header(width: int, height: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    idat = struct.pack(">I", 0) + b"IDAT" + struct.pack(">I", zlib.crc32(b"IDAT"))
    return (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(ihdr)) + chunk
            + struct.pack(">I", zlib.crc32(chunk)) + idat)


def test_sprite_declaring_a_huge_image_is_refused_before_decoding(tmp_path: Path) -> None:
    """1024 x 2**30 pixels: Pillow's DecompressionBombError is not an OSError."""
    path = tmp_path / "cifar10_batch_0.png"
    path.write_bytes(_png_header(1024, 2**30))
    with pytest.raises(DataError, match=re.escape(f"{path}: unreadable PNG")):
        read_sprite(path)
    path.write_bytes(_png_header(1024, 12_000))
    with pytest.raises(DataError, match="sprite has 12000 rows, more than 10000"):
        read_sprite(path)


ROW = Result("mlp", 0, "clean", "mnist", {}, "none", "accuracy", 0.9).to_json()


@pytest.mark.parametrize(("line", "reason"), [
    (json.dumps({**ROW, "seed": 2**70}), "field 'seed' is out of range"),
    (json.dumps(ROW).replace("0.9", "1" + "0" * 400), "int too large to convert to float"),
    ("[" * 100_000, "maximum recursion depth exceeded"),
])
def test_results_rows_beyond_the_types(tmp_path: Path, line: str, reason: str) -> None:
    (tmp_path / "results.jsonl").write_text(line + "\n")
    with pytest.raises(RunFolderError, match=re.escape(reason)) as info:
        read_results(tmp_path)
    assert str(tmp_path / "results.jsonl") in str(info.value)


@pytest.mark.parametrize(("text", "reason"), [
    ("[]", "expected a JSON object, got a JSON list"),
    ('{"columns": {"acc": true}}', "the tolerance of column 'acc' is True, not a non-negative"),
    ('{"columns": {"acc": 1' + "0" * 400 + "}}", "is too large for a float"),
    ("[" * 100_000, "is not valid JSON"),
])
def test_tolerances_beyond_the_types(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "tolerances.json"
    path.write_text(text)
    with pytest.raises(UserError, match=re.escape(reason)) as info:
        load_tolerances(path)
    assert str(path) in str(info.value)


def test_cache_config_nested_too_deep_is_a_miss(tmp_path: Path) -> None:
    entry = cache.save(tmp_path, "toy", "0123456789abcdef", nn.Linear(3, 2), {})
    (entry / cache.CONFIG).write_text("[" * 100_000)
    assert cache.load(tmp_path, "toy", "0123456789abcdef", nn.Linear(3, 2)) is None
