"""The corruption matrix: one row per way a file goes bad, and the exact message it gets.

Every row builds a damaged file from a good one, calls the loader a user would reach, and
checks the message: it names the file, says what is wrong and names the way out.
"""

from __future__ import annotations

import gzip
import io
import json
import pickle
import re
import struct
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from torch import nn

from robustbnn.data import root as data_root
from robustbnn.data import sha256_file, write_idx
from robustbnn.data.cifar10bw import CIFAR10BW, read_test_batch
from robustbnn.data.idx import read_idx
from robustbnn.data.mnist import load_mnist
from robustbnn.data.notmnist import NOTMNIST
from robustbnn.data.omniglot import OMNIGLOT
from robustbnn.errors import CacheMismatchError, DataError, UserError
from robustbnn.report.regression import load_tolerances
from robustbnn.results.schema import Result
from robustbnn.results.store import RunFolderError, read_results
from robustbnn.training import cache
from tests.data._ood_fixtures import png_bytes, write_omniglot_zip

FIX = "delete it and re-download (--download), or point --data-root/ROBUSTBNN_DATA at a good copy"


def _idx(tmp_path: Path, name: str = "t10k-images-idx3-ubyte.gz") -> Path:
    path = tmp_path / name
    write_idx(path, np.arange(2 * 28 * 28, dtype=np.uint8).reshape(2, 28, 28))
    return path


def truncated_gzip(tmp_path: Path) -> tuple[Callable[[], object], str]:
    path = _idx(tmp_path)
    path.write_bytes(path.read_bytes()[:-30])
    return lambda: read_idx(path), f"{path}: gzip stream ends early (truncated download?); {FIX}"


def wrong_idx_magic(tmp_path: Path) -> tuple[Callable[[], object], str]:
    path = tmp_path / "t10k-images-idx3-ubyte"
    path.write_bytes(b"\x01\x02\x08\x03" + bytes(40))
    return lambda: read_idx(path), (f"{path}: not an IDX file (magic 01020803, expected 00 00 "
                                    f"<type> <ndim>); {FIX}")


def wrong_idx_dims(tmp_path: Path) -> tuple[Callable[[], object], str]:
    path = tmp_path / "t10k-images-idx3-ubyte"
    path.write_bytes(bytes([0, 0, 8, 3]) + struct.pack(">III", 2, 28, 27) + bytes(2 * 28 * 28))
    return lambda: read_idx(path), (f"{path}: IDX payload has trailing bytes: 1568 bytes for "
                                    f"shape (2, 28, 27), expected 1512; {FIX}")


def idx_dims_that_overflow(tmp_path: Path) -> tuple[Callable[[], object], str]:
    """Dims whose product is 2**64: a wrapping int64 product made this 0 == the payload."""
    path = tmp_path / "t10k-images-idx3-ubyte"
    path.write_bytes(bytes([0, 0, 8, 4]) + struct.pack(">IIII", *[65536] * 4))
    return lambda: read_idx(path), (f"{path}: IDX payload truncated: 0 bytes for shape "
                                    f"(65536, 65536, 65536, 65536), expected "
                                    f"18446744073709551616; {FIX}")


def zip_with_bad_crc(tmp_path: Path) -> tuple[Callable[[], object], str]:
    path = tmp_path / "omniglot" / "images_background_small2.zip"
    write_omniglot_zip(path, "images_background_small2", {"Greek": 1}, seed=0, chars=1)
    data = bytearray(path.read_bytes())
    start = data.index(b"IHDR")  # inside the stored PNG: only the CRC can tell
    data[start + 20:start + 24] = b"\xff\x00\xff\x00"
    path.write_bytes(bytes(data))
    name = "images_background_small2/Greek/character01/0495_01.png"  # sum(b"Greek") + 1
    return (lambda: OMNIGLOT.load(tmp_path, checksums={path.name: sha256_file(path)}),
            f"{path}: corrupt zip ({name}: Bad CRC-32 for file '{name}'); delete it and "
            "re-download (--download), or point --data-root at a good copy")


def sprite_of_wrong_size(tmp_path: Path) -> tuple[Callable[[], object], str]:
    path = tmp_path / "cifar10" / "cifar10_batch_0.png"
    path.parent.mkdir()
    path.write_bytes(png_bytes(np.zeros((3, 1000, 3), dtype=np.uint8)))
    return (lambda: CIFAR10BW.load(tmp_path, checksums={path.name: sha256_file(path)}),
            f"{path}: sprite is 1000 pixels wide, expected 1024 (one 32x32 image per row)")


def checksum_mismatch(tmp_path: Path) -> tuple[Callable[[], object], str]:
    folder = tmp_path / "notmnist"
    folder.mkdir()
    path = _idx(folder)
    actual = sha256_file(path)
    return (lambda: NOTMNIST.load(tmp_path, checksums={path.name: "0" * 64}),
            f"checksum mismatch for {path}: expected sha256 {'0' * 64}, got {actual}; the file "
            "is corrupt or a different version: delete it and re-download (--download), or "
            "point --data-root/ROBUSTBNN_DATA at a good copy")


def _archive(tmp_path: Path, members: dict[str, bytes]) -> Path:
    path = tmp_path / "notmnist" / "notMNIST_small.tar.gz"
    path.parent.mkdir()
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(f"notMNIST_small/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def archive_of_undecodable_pngs(tmp_path: Path) -> tuple[Callable[[], object], str]:
    """A same-size archive of damaged PNGs once scored OOD on 5 images instead of 200."""
    good = png_bytes(np.zeros((28, 28), dtype=np.uint8))
    members = {"A/ok.png": good, **{f"B/bad{k}.png": b"\x89PNG broken" for k in range(3)}}
    path = _archive(tmp_path, members)
    return (lambda: NOTMNIST.load(tmp_path, checksums={path.name: sha256_file(path)}),
            f"{path}: 3 PNG(s) cannot be decoded (at most 2 expected, notMNIST_small has 2 "
            "known empty files), e.g. notMNIST_small/B/bad0.png; delete it and re-download "
            "(--download), or point --data-root at a good copy")


def archive_with_a_huge_member(tmp_path: Path) -> tuple[Callable[[], object], str]:
    """A member far larger than a PNG is refused before it is read into memory."""
    path = _archive(tmp_path, {"A/huge.png": bytes(2_000_000)})
    return (lambda: NOTMNIST.load(tmp_path, checksums={path.name: sha256_file(path)}),
            f"{path}: member notMNIST_small/A/huge.png is 2,000,000 bytes, more than the "
            "1,048,576 a 28x28 PNG can need; delete it and re-download (--download), or point "
            "--data-root at a good copy")


def archive_with_fewer_images_than_requested(tmp_path: Path) -> tuple[Callable[[], object], str]:
    path = _archive(tmp_path, {"A/a.png": png_bytes(np.zeros((28, 28), dtype=np.uint8))})
    return (lambda: NOTMNIST.load(tmp_path, 200, checksums={path.name: sha256_file(path)}),
            f"{path}: decoded 1 images, fewer than the 200 requested; delete it and "
            "re-download (--download), or point --data-root at a good copy")


def unreadable_data_file(tmp_path: Path) -> tuple[Callable[[], object], str]:
    """No read permission (simulated: the tests may run as root, who reads anything)."""
    folder = tmp_path / "mnist"
    folder.mkdir()
    names = ["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
             "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]
    for name in names:
        write_idx(folder / name, np.zeros((1, 28, 28) if "images" in name else (1,), np.uint8))
    locked = folder / names[0]
    real_open = open

    def guarded_open(file: object, *args: object, **kwargs: object) -> object:
        if Path(str(file)) == locked:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    def run() -> object:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(data_root, "open", guarded_open, raising=False)
            return load_mnist(tmp_path, checksums={n: "0" * 64 for n in names})

    return run, (f"cannot read {locked} (Permission denied); check the path and its "
                 "permissions, or point --data-root/ROBUSTBNN_DATA at a readable copy")


class _Evil:
    def __reduce__(self) -> tuple:
        return (print, ("unpickled code ran",))


def pickle_naming_a_callable(tmp_path: Path) -> tuple[Callable[[], object], str]:
    """A batch whose digest matches but which names a callable is refused, never run."""
    path = tmp_path / "cifar-10-batches-py" / "test_batch"
    path.parent.mkdir()
    path.write_bytes(pickle.dumps({b"data": _Evil()}))
    return (lambda: read_test_batch(path, sha256_file(path)),
            f"{path}: not a CIFAR-10 batch (UnpicklingError: global builtins.print is not "
            "allowed in a CIFAR-10 batch); delete it and re-download (--download)")


class _Net(nn.Module):
    def __init__(self, out: int = 2, *, bias: bool = True) -> None:
        super().__init__()
        self.fc = nn.Linear(3, out, bias=bias)


def _entry(tmp_path: Path, saved: nn.Module) -> Path:
    return cache.save(tmp_path, "toy", "0123456789abcdef", saved, {"seed": 0})


def cache_architecture_mismatch(tmp_path: Path) -> tuple[Callable[[], object], str]:
    entry = _entry(tmp_path, _Net(bias=False))
    return (lambda: cache.load(tmp_path, "toy", "0123456789abcdef", _Net()),
            f"cache entry {entry} of model 'toy' does not fit the model built now (missing "
            "tensor(s) fc.bias, which the model has): its code changed without a new "
            "ModelSpec.version; rerun with --no-cache, bump the version, or delete the entry")


def cache_tensor_shape_mismatch(tmp_path: Path) -> tuple[Callable[[], object], str]:
    entry = _entry(tmp_path, _Net(out=4))
    return (lambda: cache.load(tmp_path, "toy", "0123456789abcdef", _Net()),
            f"cache entry {entry} of model 'toy' does not fit the model built now (tensor "
            "fc.weight has shape (4, 3), the model expects (2, 3)): its code changed without "
            "a new ModelSpec.version; rerun with --no-cache, bump the version, or delete the "
            "entry")


def cache_config_hash_mismatch(tmp_path: Path) -> tuple[Callable[[], object], str]:
    """An entry that records another config hash (key) than its folder's: moved or copied."""
    other = cache.save(tmp_path, "toy", "fedcba9876543210", _Net(), {})
    entry = cache.entry_dir(tmp_path, "toy", "0123456789abcdef")
    other.rename(entry)
    return (lambda: cache.load(tmp_path, "toy", "0123456789abcdef", _Net()),
            f"cache entry {entry} belongs to another configuration (config.json records key "
            "'fedcba9876543210', not '0123456789abcdef'): it was moved or copied into this "
            "folder; rerun with --no-cache, or delete the entry")


def results_missing_a_column(tmp_path: Path) -> tuple[Callable[[], object], str]:
    row = Result("mlp", 0, "clean", "mnist", {}, "none", "accuracy", 0.9).to_json()
    del row["value"]
    (tmp_path / "results.jsonl").write_text(json.dumps(row) + "\n")
    return (lambda: read_results(tmp_path),
            f"{tmp_path / 'results.jsonl'} line 1 is corrupt (field 'value' is missing); rerun "
            f"robustbnn bench (`robustbnn bench --out {tmp_path}`) to recreate it")


def tolerances_with_a_non_number(tmp_path: Path) -> tuple[Callable[[], object], str]:
    path = tmp_path / "tolerances.json"
    path.write_text(json.dumps({"columns": {"acc": 0.01, "ece": "0.02"}}))
    return (lambda: load_tolerances(path),
            f"{path}: the tolerance of column 'ece' is '0.02', not a non-negative number; if "
            "the change is deliberate, refresh the committed reports with `.ci/reports "
            "refresh` (reports/README.md)")


ROWS: dict[str, tuple[Callable, type[UserError]]] = {
    "truncated_gzip": (truncated_gzip, DataError),
    "wrong_idx_magic": (wrong_idx_magic, DataError),
    "wrong_idx_dims": (wrong_idx_dims, DataError),
    "idx_dims_that_overflow": (idx_dims_that_overflow, DataError),
    "zip_with_bad_crc": (zip_with_bad_crc, DataError),
    "sprite_of_wrong_size": (sprite_of_wrong_size, DataError),
    "checksum_mismatch": (checksum_mismatch, DataError),
    "archive_of_undecodable_pngs": (archive_of_undecodable_pngs, DataError),
    "archive_with_a_huge_member": (archive_with_a_huge_member, DataError),
    "archive_with_fewer_images_than_requested": (archive_with_fewer_images_than_requested,
                                                 DataError),
    "unreadable_data_file": (unreadable_data_file, DataError),
    "pickle_naming_a_callable": (pickle_naming_a_callable, DataError),
    "cache_config_hash_mismatch": (cache_config_hash_mismatch, CacheMismatchError),
    "cache_architecture_mismatch": (cache_architecture_mismatch, CacheMismatchError),
    "cache_tensor_shape_mismatch": (cache_tensor_shape_mismatch, CacheMismatchError),
    "results_missing_a_column": (results_missing_a_column, RunFolderError),
    "tolerances_with_a_non_number": (tolerances_with_a_non_number, UserError),
}


@pytest.mark.parametrize("row", ROWS)
def test_row(row: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build, error = ROWS[row]
    call, message = build(tmp_path)
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        call()
    assert "unpickled code ran" not in capsys.readouterr().out


def test_gzip_bomb_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from robustbnn.data import idx

    monkeypatch.setattr(idx, "MAX_BYTES", 1000)
    path = tmp_path / "t10k-images-idx3-ubyte.gz"
    path.write_bytes(gzip.compress(bytes(5000)))
    with pytest.raises(DataError, match=re.escape(
            f"{path}: decompresses to more than 1,000 bytes")):
        read_idx(path)


def test_archive_readers_write_nothing(tmp_path: Path) -> None:
    """Members named ../ or absolute are read in memory only: nothing lands on disk."""
    (tmp_path / "root").mkdir()
    path = tmp_path / "root" / "notmnist" / "notMNIST_small.tar.gz"
    path.parent.mkdir()
    png = png_bytes(np.zeros((28, 28), dtype=np.uint8))
    with tarfile.open(path, "w:gz") as tar:
        for name in ("../../A/escape.png", "/tmp/A/abs.png", "notMNIST_small/A/a.png"):
            info = tarfile.TarInfo(name)
            info.size = len(png)
            tar.addfile(info, io.BytesIO(png))
    zpath = tmp_path / "root" / "omniglot" / "images_background_small1.zip"
    zpath.parent.mkdir()
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("../../Greek/c/escape.png", png_bytes(np.ones((105, 105), bool), mode="1"))
        zf.writestr("x/Greek/c/a.png", png_bytes(np.ones((105, 105), bool), mode="1"))
    before = sorted(p for p in tmp_path.rglob("*"))
    assert len(NOTMNIST.load(tmp_path / "root",
                             checksums={path.name: sha256_file(path)})) == 3
    assert len(OMNIGLOT.load(tmp_path / "root",
                             checksums={zpath.name: sha256_file(zpath)})) == 2
    assert sorted(p for p in tmp_path.rglob("*")) == before
    assert not (tmp_path / "A").exists() and not Path("/tmp/A/abs.png").exists()
