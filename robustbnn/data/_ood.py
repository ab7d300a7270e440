"""What the OOD image sets share: the file-set base, preprocessing names, first-n, digests."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

import numpy as np
import torch
from torch import Tensor

from robustbnn.data.root import ENV_VAR, file_digest, sha256_file
from robustbnn.errors import ConfigError, DataError

# "unit": pixels in [0, 1], the model's input space. "bhn_reference": the scale the Bayesian
# Hypernetworks reference code fed (docs/protocols.md §1.5); equal to "unit" for most sets.
PREPROCESSINGS: tuple[str, ...] = ("unit", "bhn_reference")

# Size of a generated set (noise, glyphs) when n <= 0: the count docs/protocols.md §1.5 uses.
GENERATED_DEFAULT_N = 10_000

# Appended to DataErrors about missing files: every way out, as the MNIST loader gives them.
WAYS_OUT = (f"point --data-root or {ENV_VAR} at a folder that has the files, or rerun with "
            "--download to fetch them")


def check_preprocessing(preprocessing: str) -> None:
    """Raise ``ConfigError`` unless ``preprocessing`` is one of :data:`PREPROCESSINGS`."""
    if preprocessing not in PREPROCESSINGS:
        raise ConfigError(f"unknown OOD preprocessing {preprocessing!r}; "
                          f"known: {list(PREPROCESSINGS)}")


def generated_count(n: int) -> int:
    """Images to generate for a request of ``n``: ``n``, or 10,000 when ``n <= 0``."""
    return n if n > 0 else GENERATED_DEFAULT_N


def first(items: list | np.ndarray, n: int) -> list | np.ndarray:
    """The first ``n`` items, or all of them when ``n <= 0``."""
    return items[:n] if n > 0 else items


def uint8_to_unit(images: np.ndarray) -> Tensor:
    """uint8 images (N, H, W) -> float32 tensor (N, 1, H, W) in [0, 1]."""
    return torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)


def md5_file(path: str | Path, *, chunk_size: int = 1 << 20) -> str:
    """md5 hex digest of a file (torchvision's checksums are md5), read in chunks.

    Raises:
        DataError: If the file cannot be read, naming it.
    """
    return file_digest(path, "md5", chunk_size=chunk_size)


def verify_digest(path: str | Path, expected: str) -> None:
    """Check a file against an md5 (32 hex digits) or sha256 (64 hex digits) digest.

    Args:
        path: The file.
        expected: The expected hex digest; its length picks the algorithm.

    Raises:
        ValueError: If ``expected`` is neither an md5 nor a sha256 digest.
        DataError: If the file cannot be read, or on a mismatch, naming the file, both
            digests and the fix.
    """
    algo = _algorithm(path, expected)
    actual = md5_file(path) if algo == "md5" else sha256_file(path)
    _compare(path, algo, expected.lower(), actual)


def verify_digest_bytes(path: str | Path, data: bytes, expected: str) -> None:
    """Check the bytes read from ``path`` against an md5 or sha256 digest.

    For readers that hash exactly the bytes they then parse (no window for the file to
    change between the check and the read).

    Raises:
        ValueError: If ``expected`` is neither an md5 nor a sha256 digest.
        DataError: On a mismatch, naming the file, both digests and the fix.
    """
    algo = _algorithm(path, expected)
    h = hashlib.md5(data, usedforsecurity=False) if algo == "md5" else hashlib.sha256(data)
    _compare(path, algo, expected.lower(), h.hexdigest())


def _algorithm(path: str | Path, expected: str) -> str:
    """"md5" or "sha256", picked by the digest's length."""
    if len(expected) == 32:
        return "md5"
    if len(expected) == 64:
        return "sha256"
    raise ValueError(f"expected an md5 or sha256 hex digest for {path}, got {expected!r}")


def _compare(path: str | Path, algo: str, expected: str, actual: str) -> None:
    """Raise the checksum-mismatch ``DataError`` unless the digests agree."""
    if actual != expected:
        raise DataError(
            f"checksum mismatch for {path}: expected {algo} {expected}, got {actual}; the file "
            f"is corrupt or a different version: delete it and re-download (--download), or "
            f"point --data-root/{ENV_VAR} at a good copy"
        )


def known_digest(path: Path, checksums: Mapping[str, str]) -> str:
    """The digest ``checksums`` gives for ``path``'s file name.

    Raises:
        DataError: If it gives none, naming the file.
    """
    if path.name not in checksums:
        raise DataError(f"no checksum known for {path}; pass checksums for it")
    return checksums[path.name]


class OODFileSet(ABC):
    """An OOD image set read from files: the common ``load`` signature, written once.

    A set says where its files are (:meth:`available`) and how to read them (:meth:`read`);
    :meth:`load` checks the preprocessing, picks the checksums and, for a set whose reference
    scale is centred, shifts the images to [-0.5, 0.5]. Register ``set.load`` and
    ``set.available`` in an :class:`~robustbnn.data.ood_sets.OODSpec`.

    Attributes:
        digests: File name -> md5 or sha256 the files are checked against when the caller
            passes no ``checksums``.
        centred_reference: True if ``"bhn_reference"`` is [-0.5, 0.5] (the Udacity scale the
            Bayesian Hypernetworks code fed notMNIST); otherwise it equals ``"unit"``.
    """

    digests: Mapping[str, str]
    centred_reference: ClassVar[bool] = False

    @abstractmethod
    def available(self, data_root: Path) -> bool:
        """True if the set's files are under ``data_root`` (cheap: no hashing, no parsing)."""

    @abstractmethod
    def read(self, data_root: Path, n: int, *, download: bool,
             checksums: Mapping[str, str]) -> Tensor:
        """The first ``n`` images (all when ``n <= 0``), float32 (N, 1, 28, 28) in [0, 1].

        Raises:
            DataError: If the files are missing (and ``download`` is False), the download
                fails, or a file fails its checksum or does not parse.
        """

    def load(
        self,
        data_root: Path,
        n: int = 0,
        *,
        seed: int = 0,
        preprocessing: str = "unit",
        download: bool = False,
        checksums: Mapping[str, str] | None = None,
    ) -> Tensor:
        """Load the first ``n`` images in the set's fixed order (all when ``n <= 0``).

        Args:
            data_root: The data root.
            n: Number of images; all of them when ``n <= 0``.
            seed: Unused (the order is fixed); accepted for the common OOD-set signature.
            preprocessing: One of :data:`PREPROCESSINGS`.
            download: Fetch the files if they are missing (needs network).
            checksums: File name -> expected md5 or sha256; defaults to :attr:`digests`.
                Tests pass the digests of their own fixtures.

        Returns:
            float32 tensor of shape (N, 1, 28, 28): in [0, 1], or [-0.5, 0.5] for
            ``"bhn_reference"`` when :attr:`centred_reference`.

        Raises:
            ConfigError: If ``preprocessing`` is unknown.
            DataError: As :meth:`read`.
        """
        check_preprocessing(preprocessing)
        x = self.read(data_root, n, download=download,
                      checksums=self.digests if checksums is None else checksums)
        return x - 0.5 if self.centred_reference and preprocessing == "bhn_reference" else x
