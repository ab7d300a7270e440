"""CIFAR-10 in grayscale at 28×28 ("CIFARbw") as an OOD set for MNIST models.

Recipe (Hendrycks & Gimpel; ``CW-Huang/BayesianHypernet`` ``dk_anomaly_detection.py``): pixels
/255, TF ``rgb_to_grayscale`` (weights 0.2989, 0.587, 0.114), then TF1 ``resize_images`` to
28×28, which is bilinear without antialiasing and, in TF1, without half-pixel centres
(source coordinate = output coordinate × 32/28); :func:`resize_bilinear_tf1` does the same.

Sources, the first one present winning:

1. torchvision's ``cifar-10-batches-py/test_batch`` (the 10,000 test images the reference
   used), in ``<root>/`` or ``<root>/cifar10/``, checked against torchvision's md5;
2. the PNG sprites ``<root>/cifar10/cifar10_batch_<k>.png`` (k = 0, 1, …) from
   ``karpathy/convnetjs``: 1024×1000 RGB, row r of sprite k is image 1000·k + r and its
   column 32·y + x is pixel (y, x). The four shared sprites are CIFAR-10 *training* images
   0–3,999 (docs/provenance.md), checked against their sha256.

With ``download=True`` and neither present, the CIFAR-10 python archive (170 MB, torchvision's
source and md5) is fetched into ``<root>/cifar10/`` and its test batch taken out of it; a mirror
(``$ROBUSTBNN_MIRROR``) that has no archive but the sprites serves those instead
(:func:`remotes`).

References:
    Krizhevsky, "Learning Multiple Layers of Features from Tiny Images", 2009. Hendrycks &
    Gimpel, "A Baseline for Detecting Misclassified and Out-of-Distribution Examples in Neural
    Networks", 2017, https://arxiv.org/abs/1610.02136
"""

from __future__ import annotations

import io
import pickle  # security scan allow-list: restricted unpickler, digest verified first
import tarfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from robustbnn._atomic import write_bytes_atomic
from robustbnn.data._ood import (
    WAYS_OUT,
    OODFileSet,
    first,
    known_digest,
    verify_digest,
    verify_digest_bytes,
)
from robustbnn.data._png import UnreadablePng, decode_png
from robustbnn.data.fetch import Remote, fetch_first
from robustbnn.data.root import unreadable
from robustbnn.errors import DataError

try:
    from numpy._core import multiarray as _multiarray
    from numpy._core import numeric as _numeric
except ImportError:  # numpy < 2
    from numpy.core import multiarray as _multiarray
    from numpy.core import numeric as _numeric

SPRITE_FOLDER = "cifar10"
BATCHES = "cifar-10-batches-py"
BATCH_FOLDERS = (".", SPRITE_FOLDER)  # torchvision's CIFAR10(root) layout, then ours
TEST_BATCH = "test_batch"
GRAY_WEIGHTS = (0.2989, 0.587, 0.114)  # tf.image.rgb_to_grayscale
# torchvision.datasets.CIFAR10.test_list (md5), and docs/provenance.md for the sprites.
CIFAR10BW_DIGESTS: dict[str, str] = {
    "test_batch": "40351d587109b95175f43aff81a1287e",
    "cifar10_batch_0.png": "0614720d69293a033786d5fe2924c4e9a9b48874f19ca4627c4662a864ee9f2d",
    "cifar10_batch_1.png": "2927e26ea68602e34a7424826b76b7336ce36b8f6bcc2e9fce0c05568ff6b4c1",
    "cifar10_batch_2.png": "0b2759e307bb405bb1a6531f8a0f557eaec46d7546050612fdb836f0fa60eae0",
    "cifar10_batch_3.png": "a4530ff15c83886058a97c352f53f38be07d191de8f410e998e91786b5900a26",
}

MAX_SPRITE_ROWS = 10_000
# What --download fetches: torchvision.datasets.CIFAR10's archive (url, tgz_md5), else the
# sprites at the convnetjs commit docs/provenance.md names.
ARCHIVE = "cifar-10-python.tar.gz"
ARCHIVE_URL = "https://www.cs.toronto.edu/~kriz/" + ARCHIVE
ARCHIVE_MD5 = "c58f30108f718f92721af3b95e74349a"
SPRITE_URL = ("https://raw.githubusercontent.com/karpathy/convnetjs/"
              "39afa8cd5e4cfb5771dc8a1f51bc56aa080f0b51/demo/cifar10/")
MAX_BATCH_BYTES = 64 << 20  # the test batch is 31 MB; bounds memory when taking it out
# The only globals a CIFAR-10 batch pickle may name: numpy's array reconstructors, under their
# numpy 1 and numpy 2 module names (the official batches were written by numpy 1).
_ALLOWED_GLOBALS: dict[tuple[str, str], object] = {
    **{(m, "_reconstruct"): _multiarray._reconstruct
       for m in ("numpy.core.multiarray", "numpy._core.multiarray")},
    **{(m, "_frombuffer"): _numeric._frombuffer
       for m in ("numpy.core.numeric", "numpy._core.numeric")},
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
}


def _test_batch(data_root: Path) -> Path | None:
    """torchvision's ``test_batch`` in the first of :data:`BATCH_FOLDERS` that has it."""
    for sub in BATCH_FOLDERS:
        path = Path(data_root) / sub / BATCHES / TEST_BATCH
        if path.is_file():
            return path
    return None


def _sprites(data_root: Path) -> list[Path]:
    """``cifar10_batch_0.png``, ``_1``, … up to the first missing one."""
    paths, k = [], 0
    while (path := Path(data_root) / SPRITE_FOLDER / f"cifar10_batch_{k}.png").is_file():
        paths.append(path)
        k += 1
    return paths


class _BatchUnpickler(pickle.Unpickler):
    """An unpickler that builds only dicts, lists, bytes, numbers and numpy arrays.

    A CIFAR-10 batch needs no other class, so a forged file can name no callable beyond
    numpy's array reconstructors: no code runs while it is read.
    """

    def find_class(self, module: str, name: str) -> object:
        """The allowed numpy global named ``module.name``; anything else is refused."""
        try:
            return _ALLOWED_GLOBALS[module, name]
        except KeyError:
            raise pickle.UnpicklingError(f"global {module}.{name} is not allowed in a CIFAR-10 "
                                         "batch") from None


def read_test_batch(path: str | Path, digest: str | None = CIFAR10BW_DIGESTS[TEST_BATCH]
                    ) -> np.ndarray:
    """Read a torchvision/CIFAR ``test_batch`` pickle, verifying its digest first.

    The bytes are hashed and compared with ``digest`` before they are unpickled, and the
    unpickler builds only plain containers and numpy arrays (:class:`_BatchUnpickler`).

    Args:
        path: The ``test_batch`` file.
        digest: Its expected md5 or sha256; the official md5 by default. None skips the check
            (the restricted unpickler still runs no code).

    Returns:
        uint8 array of shape (N, 32, 32, 3).

    Raises:
        DataError: Naming the file, if it cannot be read, fails its checksum, cannot be
            unpickled or holds no (N, 3072) uint8 ``data``.
    """
    path = Path(path)
    fix = "delete it and re-download (--download)"
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise unreadable(path, e) from e
    if digest is not None:
        verify_digest_bytes(path, raw, digest)
    try:
        batch = _BatchUnpickler(io.BytesIO(raw), encoding="bytes").load()
    # Unpickling damaged bytes fails in many ways (UnpicklingError, EOFError, ValueError,
    # KeyError, TypeError, IndexError, MemoryError ...); with find_class restricted none of
    # them can come from code the file chose, so all of them mean "not a batch".
    except Exception as e:  # noqa: BLE001
        raise DataError(f"{path}: not a CIFAR-10 batch ({type(e).__name__}: {e}); {fix}") from e
    data = batch.get(b"data") if isinstance(batch, dict) else None
    if not isinstance(data, np.ndarray):
        raise DataError(f"{path}: not a CIFAR-10 batch (no b'data' array in a "
                        f"{type(batch).__name__}); {fix}")
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != 3 * 32 * 32:
        raise DataError(f"{path}: expected uint8 data of shape (N, 3072), got {data.dtype} "
                        f"{data.shape}; {fix}")
    return data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)


def read_sprite(path: str | Path) -> np.ndarray:
    """Read one convnetjs CIFAR-10 sprite: row r is one image, column 32·y + x pixel (y, x).

    Returns:
        uint8 array of shape (rows, 32, 32, 3).

    Raises:
        DataError: If the file cannot be read, the PNG cannot be decoded, or it is not 1024
            pixels wide with at most :data:`MAX_SPRITE_ROWS` rows (checked before decoding).
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise unreadable(path, e) from e

    def check(width: int, height: int) -> None:
        if width != 32 * 32:
            raise DataError(f"{path}: sprite is {width} pixels wide, expected 1024 "
                            "(one 32x32 image per row)")
        if height > MAX_SPRITE_ROWS:
            raise DataError(f"{path}: sprite has {height} rows, more than {MAX_SPRITE_ROWS} "
                            "(the convnetjs sprites have 1000)")

    try:
        rgb = decode_png(raw, "RGB", check_size=check)
    except UnreadablePng as e:
        raise DataError(f"{path}: unreadable PNG ({e}); delete it and copy a good one") from e
    return rgb.reshape(-1, 32, 32, 3)


def resize_bilinear_tf1(x: Tensor, size: tuple[int, int]) -> Tensor:
    """Bilinear resize as TF1 ``tf.image.resize_images`` does by default.

    No antialiasing, ``align_corners=False`` and no half-pixel centres: output pixel i samples
    the input at i · (in / out), the last row and column clamped. torch's
    ``interpolate(mode="bilinear")`` uses half-pixel centres, a shift of up to 0.07 pixel here.

    Args:
        x: Images, shape (B, C, H, W), floating point.
        size: Output (height, width).

    Returns:
        Resized images, shape (B, C, *size), same dtype.

    Example:
        >>> ramp = torch.arange(32.0).expand(1, 1, 32, 32)
        >>> resize_bilinear_tf1(ramp, (28, 28))[0, 0, 0, :3].tolist()  # j * 32 / 28
        [0.0, 1.1428571939468384, 2.2857143878936768]
    """
    def axis(n_in: int, n_out: int) -> tuple[Tensor, Tensor, Tensor]:
        """Lower and upper source indices and the weight of the upper one."""
        src = torch.arange(n_out, dtype=torch.float64) * (n_in / n_out)
        lo = src.floor().long().clamp(max=n_in - 1)
        return lo, (lo + 1).clamp(max=n_in - 1), (src - lo).to(x.dtype)

    y0, y1, fy = axis(x.shape[-2], size[0])
    x0, x1, fx = axis(x.shape[-1], size[1])
    rows = x[..., y0, :] + (x[..., y1, :] - x[..., y0, :]) * fy[:, None]  # (B, C, h, W)
    return rows[..., x0] + (rows[..., x1] - rows[..., x0]) * fx  # (B, C, h, w)


def grayscale_28(images: np.ndarray) -> Tensor:
    """uint8 RGB (N, 32, 32, 3) -> float32 (N, 1, 28, 28) in [0, 1], the CIFARbw recipe."""
    rgb = torch.from_numpy(np.ascontiguousarray(images)).to(torch.float32) / 255.0
    gray = (rgb * torch.tensor(GRAY_WEIGHTS)).sum(-1).unsqueeze(1)  # (N, 1, 32, 32)
    return resize_bilinear_tf1(gray, (28, 28)).clamp_(0.0, 1.0)


def remotes(checksums: Mapping[str, str]) -> list[list[Remote]]:
    """What ``--download`` fetches, in the order the reader prefers: the python archive, else
    the four convnetjs sprites (training images 0-3,999), each into ``cifar10/`` and checked
    by ``checksums`` (default: :data:`ARCHIVE_MD5` and :data:`CIFAR10BW_DIGESTS`)."""
    checksums = {ARCHIVE: ARCHIVE_MD5, **CIFAR10BW_DIGESTS, **checksums}
    archive = Remote(folder=SPRITE_FOLDER, name=ARCHIVE, urls=(ARCHIVE_URL,),
                     digest=checksums[ARCHIVE], what="CIFAR-10")
    sprites = [Remote(folder=SPRITE_FOLDER, name=f"cifar10_batch_{k}.png",
                      urls=(f"{SPRITE_URL}cifar10_batch_{k}.png",),
                      digest=checksums[f"cifar10_batch_{k}.png"], what="CIFAR-10")
               for k in range(4)]
    return [[archive], sprites]


def extract_test_batch(archive: Path, checksums: Mapping[str, str]) -> Path:
    """Take ``cifar-10-batches-py/test_batch`` out of the python archive beside it, checked
    against its md5 before it is written (atomically) to ``<archive's folder>/`` + member.

    Raises:
        DataError: If the archive is corrupt, lacks the member, the member is too large, or
            fails its checksum; nothing is written then.
    """
    member = f"{BATCHES}/{TEST_BATCH}"
    dest = archive.parent / member
    fix = f"delete {archive} and re-download (--download)"
    try:
        with tarfile.open(archive, "r:gz") as tar:
            info = tar.getmember(member)
            if not info.isfile() or info.size > MAX_BATCH_BYTES:
                raise DataError(f"{archive}: {member} is not a file of at most "
                                f"{MAX_BATCH_BYTES:,} bytes; {fix}")
            data = tar.extractfile(info).read()
    except (KeyError, tarfile.TarError, OSError, EOFError) as err:
        raise DataError(f"{archive}: cannot take {member} out of it "
                        f"({type(err).__name__}: {err}); {fix}") from err
    verify_digest_bytes(dest, data, known_digest(dest, checksums))
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(dest, data)
    return dest


class Cifar10bwSet(OODFileSet):
    """CIFARbw: the CIFAR-10 test batch if present, else the convnetjs sprites.

    Order: file order (test-batch order, or sprite 0 row 0, row 1, …, then sprite 1, …).
    Both preprocessings are the same: the reference also worked on pixels /255. Checked
    against :data:`CIFAR10BW_DIGESTS` by default; with ``download=True`` and neither source
    present, :func:`remotes` says what is fetched (the 170 MB archive first).
    """

    digests = CIFAR10BW_DIGESTS

    def available(self, data_root: Path) -> bool:
        """True if the torchvision test batch or sprite 0 is under ``data_root``."""
        return _test_batch(data_root) is not None or bool(_sprites(data_root))

    def read(self, data_root: Path, n: int, *, download: bool,
             checksums: Mapping[str, str]) -> Tensor:
        """The first ``n`` images, float32 (N, 1, 28, 28) in [0, 1] (all when ``n <= 0``).

        Raises:
            DataError: If no source is present (and ``download`` is False), the download
                fails, or a file fails its checksum or cannot be parsed.
        """
        if not self.available(data_root) and download:
            fetched = fetch_first(remotes(checksums), Path(data_root))
            if fetched[0].name == ARCHIVE:
                extract_test_batch(fetched[0], checksums)
        batch = _test_batch(data_root)
        paths = [batch] if batch is not None else _sprites(data_root)
        if not paths:
            raise DataError(
                f"CIFAR-10 missing: neither {Path(data_root) / BATCHES / TEST_BATCH} nor "
                f"{Path(data_root) / SPRITE_FOLDER / 'cifar10_batch_0.png'} exists; copy the "
                f"torchvision test batch or the PNG sprites there, {WAYS_OUT}"
            )
        parts, need = [], n if n > 0 else None
        for path in paths:
            digest = known_digest(path, checksums)
            if path == batch:  # the reader hashes the bytes it unpickles
                parts.append(read_test_batch(path, digest))
            else:
                verify_digest(path, digest)
                parts.append(read_sprite(path))
            if need is not None and sum(len(p) for p in parts) >= need:
                break  # the remaining sprites are not needed
        return grayscale_28(first(np.concatenate(parts), n))


CIFAR10BW = Cifar10bwSet()
