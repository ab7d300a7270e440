"""notMNIST (letters A–J in many fonts) as an OOD set for MNIST models.

Two on-disk forms are read, the first one present winning:

1. ``<root>/notmnist/t10k-images-idx3-ubyte.gz``: David Flanagan's IDX conversion of a random
   sample of 1,000 images per letter from ``notMNIST_small`` (10,000 images, already shuffled),
   checked against its sha256 (``docs/provenance.md``);
2. ``<root>/notmnist/notMNIST_small.tar.gz``: the original archive (folders ``A`` … ``J`` of
   28×28 PNGs), read in memory with every member size-bounded. It is checked against its
   sha256 when one is known (``checksums`` or :data:`ARCHIVE_SHA256`); no digest of it is
   published, so otherwise against its size (8,458,043 bytes, the only integrity value the
   Udacity notebooks publish) and its content: it must decode to exactly
   :data:`ARCHIVE_IMAGES` images.

With ``download=True`` and neither file present, the IDX images (form 1) are fetched over https
from the conversion's repository at a pinned commit and verified by their sha256 before they
are put in place; the unverifiable archive is never downloaded.

References:
    Bulatov, "notMNIST dataset", 2011,
    http://yaroslavvb.blogspot.com/2011/09/notmnist-dataset.html
    Hendrycks & Gimpel, "A Baseline for Detecting Misclassified and Out-of-Distribution
    Examples in Neural Networks", 2017, https://arxiv.org/abs/1610.02136
"""

from __future__ import annotations

import logging
import tarfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from torch import Tensor

from robustbnn.data._ood import (
    WAYS_OUT,
    OODFileSet,
    first,
    uint8_to_unit,
    verify_digest,
)
from robustbnn.data._png import UnreadablePng, decode_png
from robustbnn.data.fetch import Remote, fetch
from robustbnn.data.idx import read_idx
from robustbnn.data.root import unreadable
from robustbnn.errors import DataError

log = logging.getLogger(__name__)

FOLDER = "notmnist"
IMAGES = "t10k-images-idx3-ubyte.gz"
ARCHIVE = "notMNIST_small.tar.gz"
# What --download fetches: the IDX images of davidflanagan/notMNIST-to-MNIST at the commit whose
# files docs/provenance.md records, over https, verified by NOTMNIST_SHA256 below.
IMAGES_URL = ("https://raw.githubusercontent.com/davidflanagan/notMNIST-to-MNIST/"
              "17823f4d4a3acd8317c07866702d2eb2ac79c7a0/" + IMAGES)
ARCHIVE_BYTES = 8_458_043
# sha256 of the original notMNIST_small.tar.gz: none is published and no copy could be hashed
# here. While it is None a local archive is checked by size and by its decoded image count,
# unless the caller passes its digest in ``checksums``; fill it in from a verified copy.
ARCHIVE_SHA256: str | None = None
# notMNIST_small holds 18,726 PNGs, two of them empty files that no reader can decode.
KNOWN_UNREADABLE = 2
ARCHIVE_IMAGES = 18_724
MAX_MEMBER_BYTES = 1 << 20  # a 28x28 grayscale PNG is under 2 kB; bounds memory per member
_FIX = "delete it and re-download (--download), or point --data-root at a good copy"
LETTERS = "ABCDEFGHIJ"
# The sha256s of davidflanagan/notMNIST-to-MNIST's files, as docs/provenance.md lists them.
NOTMNIST_SHA256: dict[str, str] = {
    "t10k-images-idx3-ubyte.gz":
        "70ae9e06201f2827e5b0a3781a3169d735dd2efc69996b9eeaee7f10ed4044d7",
    "t10k-labels-idx1-ubyte.gz":
        "1fa03836e01c862542f8eb83463bb951bebec6fcb3efa28dad748c6b38a9021b",
}


def read_notmnist_archive(path: str | Path, *,
                          max_unreadable: int = KNOWN_UNREADABLE) -> np.ndarray:
    """Read the PNGs of ``notMNIST_small.tar.gz`` (or ``notMNIST_large``) without extracting.

    Nothing is written to disk. Each letter PNG's size is checked against
    :data:`MAX_MEMBER_BYTES` before it is read, and its declared image size before it is
    decoded. Up to ``max_unreadable`` undecodable PNGs (``notMNIST_small`` has 2 empty files)
    are skipped and logged; more are an error, since a damaged archive would otherwise score
    OOD on a fraction of the images. The order interleaves the letters, A B C … J A B …, each
    letter's files sorted by name, so that any prefix of the result covers all ten letters.

    Args:
        path: The ``.tar.gz`` archive; PNGs are taken from folders named ``A`` … ``J``.
        max_unreadable: How many undecodable PNGs to tolerate.

    Returns:
        uint8 array of shape (N, 28, 28), white glyph strokes on a dark background as stored.

    Raises:
        DataError: Naming the archive, if it cannot be read, is corrupt or truncated, holds no
            letter PNGs, a member larger than :data:`MAX_MEMBER_BYTES`, a PNG that is not
            28×28, or more than ``max_unreadable`` undecodable PNGs.
    """
    path = Path(path)
    by_letter: dict[str, list[tuple[str, np.ndarray]]] = {c: [] for c in LETTERS}
    skipped: list[str] = []
    try:
        with tarfile.open(path, "r:gz") as tar:
            for member in tar:
                parts = member.name.split("/")
                if not (member.isfile() and member.name.endswith(".png") and len(parts) >= 2
                        and parts[-2] in by_letter):
                    continue
                if member.size > MAX_MEMBER_BYTES:
                    raise DataError(f"{path}: member {member.name} is {member.size:,} bytes, "
                                    f"more than the {MAX_MEMBER_BYTES:,} a 28x28 PNG can need; "
                                    f"{_FIX}")
                data = tar.extractfile(member).read()
                try:
                    pixels = decode_png(data, "L", check_size=_size_check(path, member.name))
                except UnreadablePng:  # empty or damaged PNG
                    skipped.append(member.name)
                    continue
                by_letter[parts[-2]].append((member.name, pixels))
    except FileNotFoundError as e:
        raise DataError(f"{path} does not exist; {_FIX}") from e
    except PermissionError as e:
        raise unreadable(path, e) from e
    # tarfile and gzip report damage as TarError, EOFError, zlib.error, OSError (BadGzipFile)
    # or, for malformed header fields, ValueError (UnicodeDecodeError included)
    except (tarfile.TarError, EOFError, zlib.error, OSError, ValueError) as e:
        raise DataError(f"{path}: corrupt or truncated archive ({e}); {_FIX}") from e
    if len(skipped) > max_unreadable:
        raise DataError(f"{path}: {len(skipped)} PNG(s) cannot be decoded (at most "
                        f"{max_unreadable} expected, notMNIST_small has {KNOWN_UNREADABLE} "
                        f"known empty files), e.g. {skipped[0]}; {_FIX}")
    if skipped:
        log.info("%s: skipped %d unreadable PNG(s) (notMNIST_small has %d known empty files), "
                 "e.g. %s", path, len(skipped), KNOWN_UNREADABLE, skipped[0])
    groups = [[px for _, px in sorted(by_letter[c], key=lambda t: t[0])] for c in LETTERS]
    longest = max(len(g) for g in groups)
    if longest == 0:
        raise DataError(f"{path}: no PNGs in folders A..J; is this notMNIST_small.tar.gz?")
    images = [g[k] for k in range(longest) for g in groups if k < len(g)]
    return np.stack(images)


def _size_check(path: Path, name: str) -> Callable[[int, int], None]:
    """A ``decode_png`` size check: 28×28, else a ``DataError`` naming archive and member."""
    def check(width: int, height: int) -> None:
        if (width, height) != (28, 28):
            raise DataError(f"{path}: {name} is {width}x{height}, expected 28x28; is this "
                            "notMNIST?")
    return check


def remote(sha256: str) -> Remote:
    """The IDX images as a :class:`~robustbnn.data.fetch.Remote`: ``notmnist/`` from
    :data:`IMAGES_URL`, checked by ``sha256``."""
    return Remote(folder=FOLDER, name=IMAGES, urls=(IMAGES_URL,), digest=sha256,
                  what="notMNIST")


def _check_size(path: Path, expected: int | None) -> None:
    """Raise ``DataError`` if the archive's size is not ``expected`` (None: no check)."""
    try:
        size = path.stat().st_size
    except OSError as err:
        raise unreadable(path, err) from err
    if expected is not None and size != expected:
        raise DataError(f"{path} has {size:,} bytes, expected {expected:,} (the original "
                        f"notMNIST_small.tar.gz); delete it and re-download (--download), or "
                        f"point --data-root at a good copy")


@dataclass(frozen=True)
class NotMNISTSet(OODFileSet):
    """notMNIST images, the IDX sample if present, else the original archive.

    Order: the IDX file's order (already shuffled, 1,000 per letter); for the archive, the
    letters interleaved (see :func:`read_notmnist_archive`). ``"unit"`` gives [0, 1];
    ``"bhn_reference"`` gives [-0.5, 0.5], the Udacity scale ``(x - 127.5) / 255`` of the
    ``notMNIST.pickle`` the Bayesian Hypernetworks code used (docs/protocols.md §1.5; it used 1,000
    images). Files are checked against :data:`NOTMNIST_SHA256` by default (the sha256 of the
    IDX files and, optionally, of the archive). With ``download=True`` and neither file
    present, the IDX images are fetched over https and verified by their sha256.

    Args:
        archive_bytes: Expected size of the archive, checked only when no sha256 is known for
            it; None skips the size check.
        archive_images: How many images the archive must decode to, checked only when no
            sha256 is known for it; None skips the check.
    """

    archive_bytes: int | None = ARCHIVE_BYTES
    archive_images: int | None = ARCHIVE_IMAGES
    digests = NOTMNIST_SHA256
    centred_reference = True

    def available(self, data_root: Path) -> bool:
        """True if the IDX images or the original archive are under ``<data_root>/notmnist``."""
        folder = Path(data_root) / FOLDER
        return (folder / IMAGES).is_file() or (folder / ARCHIVE).is_file()

    def read(self, data_root: Path, n: int, *, download: bool,
             checksums: Mapping[str, str]) -> Tensor:
        """The first ``n`` images, float32 (N, 1, 28, 28) in [0, 1] (all when ``n <= 0``).

        Raises:
            DataError: If the files are missing (and ``download`` is False), the download
                fails, a file is corrupt or fails its checksum or size check, or the archive
                decodes to fewer than ``n`` images.
        """
        folder = Path(data_root) / FOLDER
        idx, archive = folder / IMAGES, folder / ARCHIVE
        if idx.is_file() or (download and not archive.is_file()):
            if IMAGES not in checksums:
                raise DataError(f"no sha256 known for {idx}; pass checksums for it")
            if idx.is_file():
                verify_digest(idx, checksums[IMAGES])
            else:
                fetch(remote(checksums[IMAGES]), Path(data_root))  # verified, then put in place
            images = read_idx(idx)
            if images.dtype != np.uint8 or images.shape[1:] != (28, 28):
                raise DataError(f"{idx}: expected uint8 images of shape (N, 28, 28), got "
                                f"{images.dtype} {images.shape}; replace it with the notMNIST "
                                f"file")
        elif archive.is_file():
            images = self._read_archive(archive, n, checksums)
        else:
            raise DataError(f"notMNIST missing: neither {idx} nor {archive} exists; copy one of "
                            f"them there, {WAYS_OUT}")
        return uint8_to_unit(np.ascontiguousarray(first(images, n)))

    def _read_archive(self, archive: Path, n: int, checksums: Mapping[str, str]) -> np.ndarray:
        """The archive's images, checked by sha256 if one is known, else by size and count."""
        digest = checksums.get(ARCHIVE, ARCHIVE_SHA256)
        if digest:
            verify_digest(archive, digest)
        else:
            _check_size(archive, self.archive_bytes)
        images = read_notmnist_archive(archive)
        if (not digest and self.archive_images is not None
                and len(images) != self.archive_images):
            raise DataError(f"{archive}: decoded {len(images):,} images, not the "
                            f"{self.archive_images:,} of notMNIST_small.tar.gz (no sha256 of it "
                            f"is published, so its content is checked); {_FIX}")
        if n > len(images):
            raise DataError(f"{archive}: decoded {len(images)} images, fewer than the {n} "
                            f"requested; {_FIX}")
        return images


NOTMNIST = NotMNISTSet()
