"""Omniglot characters of the 15 "safe" alphabets as an OOD set for MNIST models.

Hendrycks & Gimpel's MNIST recipe, as run by the Bayesian Hypernetworks code
(``CW-Huang/BayesianHypernet`` ``dk_anomaly_detection.py``), keeps the alphabets at indices
:data:`SAFE_INDICES` of the 30 background alphabets ("other alphabets have characters which
look like digits"), inverts each 105×105 binary image and shrinks it to 28×28.

The images are read straight from the original zips in ``<root>/omniglot/`` (or torchvision's
``<root>/omniglot-py/``), without extracting them: ``images_background.zip`` (all 30
alphabets) if present, and the "background small" zips ``images_background_small1.zip`` and
``images_background_small2.zip``, which hold 5 of the safe alphabets (Balinese, Greek,
Japanese_(katakana), Latin, Sanskrit; 3,260 unique images). Greek and Latin are in both small
zips; an image is kept once per path ``alphabet/character/file.png``.

The alphabet order. The reference indexes ``data_background.mat``, whose ``names`` we could
not read; we take it to be the sorted folder list (:data:`BACKGROUND_ALPHABETS`, MATLAB
``dir`` order, the order of the zip's folders). That yields the 15 names in
:data:`SAFE_ALPHABETS`, which docs/provenance.md derives the same way.

Polarity. The PNGs hold black strokes (0) on white (1). Inverting them gives white strokes on
black, like MNIST; that is what this loader returns. Read literally, the reference did the
opposite: in ``data_background.mat`` strokes are ``True`` (Omniglot's ``plot_image_only.m``:
"binary image (black = true)"), so ``1 - example[0]`` is black on white. But white on black
is what reproduces the published MLP AUROC of 94.92: a 784-256-256-256-10 ReLU MLP (10
epochs, two seeds) scored 94.5 and 95.0 on this loader's output and 13 and 50 on its
inverse.

References:
    Lake, Salakhutdinov & Tenenbaum, "Human-level concept learning through probabilistic
    program induction", Science 350(6266), 2015. Hendrycks & Gimpel, "A Baseline for
    Detecting Misclassified and Out-of-Distribution Examples in Neural Networks", 2017,
    https://arxiv.org/abs/1610.02136
"""

from __future__ import annotations

import lzma
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from robustbnn.data._ood import (
    WAYS_OUT,
    OODFileSet,
    first,
    known_digest,
    verify_digest,
)
from robustbnn.data._png import UnreadablePng, decode_png
from robustbnn.data.fetch import Remote, fetch_first
from robustbnn.data.root import unreadable
from robustbnn.errors import DataError

FOLDERS = ("omniglot", "omniglot-py")  # ours, then torchvision's download folder
ZIPS = ("images_background.zip", "images_background_small1.zip", "images_background_small2.zip")
# sha256 from docs/provenance.md for the small zips; torchvision's md5 for the full set.
OMNIGLOT_DIGESTS: dict[str, str] = {
    "images_background.zip": "68d2efa1b9178cc56df9314c21c6e718",
    "images_background_small1.zip":
        "f38eb80f801274ac2b4dff5b24289016bfaba4a7d5bb50deebf27104ad6cb8a4",
    "images_background_small2.zip":
        "3ccaa407515a8778e5d0861875af38b17e418f301ad5bb3b5a6b65d901a41c7f",
}
# Where --download fetches the zips: Lake et al.'s repository (torchvision's source too).
SOURCE = "https://raw.githubusercontent.com/brendenlake/omniglot/master/python/"
BACKGROUND_ALPHABETS: tuple[str, ...] = (
    "Alphabet_of_the_Magi", "Anglo-Saxon_Futhorc", "Arcadian", "Armenian",
    "Asomtavruli_(Georgian)", "Balinese", "Bengali", "Blackfoot_(Canadian_Aboriginal_Syllabics)",
    "Braille", "Burmese_(Myanmar)", "Cyrillic", "Early_Aramaic", "Futurama", "Grantha", "Greek",
    "Gujarati", "Hebrew", "Inuktitut_(Canadian_Aboriginal_Syllabics)", "Japanese_(hiragana)",
    "Japanese_(katakana)", "Korean", "Latin", "Malay_(Jawi_-_Arabic)", "Mkhedruli_(Georgian)",
    "N_Ko", "Ojibwe_(Canadian_Aboriginal_Syllabics)", "Sanskrit", "Syriac_(Estrangelo)",
    "Tagalog", "Tifinagh",
)
SAFE_INDICES: tuple[int, ...] = (0, 2, 5, 6, 8, 12, 13, 14, 15, 16, 17, 18, 19, 21, 26)
SAFE_ALPHABETS: tuple[str, ...] = tuple(BACKGROUND_ALPHABETS[i] for i in SAFE_INDICES)
_CHUNK = 512  # images resized per call, to bound memory (105*105 floats each)
MAX_MEMBER_BYTES = 1 << 20  # an Omniglot PNG is under 1 kB; bounds memory per member
# How zipfile reports a damaged archive or member: BadZipFile (bad CRC, bad headers), OSError,
# EOFError, zlib/lzma errors (bad deflate/lzma data), NotImplementedError (an unsupported
# compression method), RuntimeError (an encrypted member) and ValueError (UnicodeDecodeError
# for a name flagged UTF-8 that is not).
_ZIP_ERRORS = (zipfile.BadZipFile, OSError, EOFError, zlib.error, lzma.LZMAError,
               NotImplementedError, RuntimeError, ValueError)


def _zips(data_root: Path) -> list[Path]:
    """The Omniglot zips present, in :data:`ZIPS` order within each folder of :data:`FOLDERS`."""
    return [Path(data_root) / d / z for d in FOLDERS for z in ZIPS
            if (Path(data_root) / d / z).is_file()]


def _corrupt(path: Path, error: object) -> DataError:
    """The error for an unreadable zip or member, with the fix."""
    return DataError(f"{path}: corrupt zip ({error}); delete it and re-download (--download), "
                     f"or point --data-root at a good copy")


def list_safe_images(paths: list[Path]) -> list[tuple[str, Path, str]]:
    """Safe-alphabet PNGs in the zips, one per ``alphabet/character/file.png``, sorted by it.

    Args:
        paths: Zip files; for a path found in several zips the first zip wins.

    Returns:
        ``(key, zip path, member name)`` triples sorted by key.

    Raises:
        DataError: If a file is not a readable zip, naming it.
    """
    safe, found = set(SAFE_ALPHABETS), {}
    for path in paths:
        try:
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
        except PermissionError as e:
            raise unreadable(path, e) from e
        except _ZIP_ERRORS as e:
            raise _corrupt(path, e) from e
        for name in names:
            parts = name.split("/")
            if name.endswith(".png") and len(parts) >= 3 and parts[-3] in safe:
                found.setdefault("/".join(parts[-3:]), (path, name))
    return [(key, *found[key]) for key in sorted(found)]


def _member(zf: zipfile.ZipFile, path: Path, name: str) -> np.ndarray:
    """One PNG of an open zip as float32 (105, 105) in [0, 1], its size bounded before reading."""
    size = zf.getinfo(name).file_size
    if size > MAX_MEMBER_BYTES:
        raise _corrupt(path, f"{name} is {size:,} bytes, more than the {MAX_MEMBER_BYTES:,} a "
                             "105x105 PNG can need")

    def check(width: int, height: int) -> None:
        if (width, height) != (105, 105):
            raise DataError(f"{path}: {name} is {width}x{height}, expected 105x105 like every "
                            "Omniglot image; are these Omniglot zips?")

    try:
        return decode_png(zf.read(name), "L", check_size=check).astype(np.float32) / 255.0
    except (*_ZIP_ERRORS, UnreadablePng) as e:
        raise _corrupt(path, f"{name}: {e}") from e


def _decode(items: list[tuple[str, Path, str]]) -> np.ndarray:
    """Decode the listed PNGs to float32 (N, 1, 105, 105) in [0, 1], 1 = white, as stored."""
    images, handles = [], {}
    try:
        for _, path, name in items:
            if path not in handles:
                try:
                    handles[path] = zipfile.ZipFile(path)
                except _ZIP_ERRORS as e:  # changed since it was listed
                    raise _corrupt(path, e) from e
            images.append(_member(handles[path], path, name))
    finally:
        for zf in handles.values():
            zf.close()
    return np.stack(images)[:, None]


def remotes(checksums: Mapping[str, str]) -> list[list[Remote]]:
    """What ``--download`` fetches, in the order the reader prefers: the full background zip
    (all 30 alphabets), else the two background-small zips (5 of the 15 safe alphabets), each
    into ``omniglot/`` and checked by ``checksums`` (default: :data:`OMNIGLOT_DIGESTS`)."""
    digests = {**OMNIGLOT_DIGESTS, **checksums}

    def remote(name: str) -> Remote:
        return Remote(folder=FOLDERS[0], name=name, urls=(SOURCE + name,),
                      digest=digests[name], what="Omniglot")

    return [[remote(ZIPS[0])], [remote(z) for z in ZIPS[1:]]]


class OmniglotSet(OODFileSet):
    """The safe-alphabet Omniglot images, inverted and shrunk to 28×28.

    Order: sorted by ``alphabet/character/file.png``, so a prefix holds whole alphabets (with
    the small zips the first 480 are Balinese): ask for all (``n <= 0``) to cover every
    alphabet. Each image is inverted (1 − img: white strokes on black) and resized 105→28
    with area averaging (``torch.nn.functional.interpolate(mode="area")``, an antialiasing box
    filter), so values stay in [0, 1] and are not binary. Both preprocessings are the same:
    docs/protocols.md §1.5 measured that the reference numbers need the [0, 1] scale (on polarity,
    see the module docstring). Zips are checked against :data:`OMNIGLOT_DIGESTS` by default;
    with ``download=True`` and no zip present, :func:`remotes` says what is fetched.
    """

    digests = OMNIGLOT_DIGESTS

    def available(self, data_root: Path) -> bool:
        """True if any Omniglot background zip is under ``omniglot/`` or ``omniglot-py/``."""
        return bool(_zips(data_root))

    def read(self, data_root: Path, n: int, *, download: bool,
             checksums: Mapping[str, str]) -> Tensor:
        """The first ``n`` images, float32 (N, 1, 28, 28) in [0, 1] (all when ``n <= 0``).

        Raises:
            DataError: If no zip is present (and ``download`` is False), the download fails,
                a zip fails its checksum or is corrupt, or no safe alphabet is in the zips.
        """
        paths = _zips(data_root)
        if not paths and download:
            fetch_first(remotes(checksums), Path(data_root))
            paths = _zips(data_root)
        if not paths:
            raise DataError(f"Omniglot missing: none of {', '.join(ZIPS)} is in "
                            f"{Path(data_root) / FOLDERS[0]}; copy them there, {WAYS_OUT}")
        for path in paths:
            verify_digest(path, known_digest(path, checksums))
        items = list_safe_images(paths)
        if not items:
            raise DataError(f"no image of the safe alphabets {list(SAFE_ALPHABETS)} in "
                            f"{', '.join(str(p) for p in paths)}; are these Omniglot zips?")
        items = first(items, n)
        out = []
        for start in range(0, len(items), _CHUNK):
            strokes = 1.0 - torch.from_numpy(_decode(items[start:start + _CHUNK]))
            out.append(F.interpolate(strokes, size=(28, 28), mode="area").clamp_(0.0, 1.0))
        return torch.cat(out)


OMNIGLOT = OmniglotSet()
