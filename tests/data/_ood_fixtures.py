"""Writers of tiny OOD fixture files in the real on-disk formats (no network)."""

from __future__ import annotations

import io
import pickle
import tarfile
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from robustbnn.data import sha256_file
from robustbnn.data._ood import OODFileSet
from robustbnn.errors import DataError


def png_bytes(pixels: np.ndarray, mode: str | None = None) -> bytes:
    """Encode an array as PNG (mode '1' for bool arrays, else L or RGB)."""
    img = Image.fromarray(pixels)
    if mode is not None:
        img = img.convert(mode)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def omniglot_image(rng: np.random.Generator, size: int = 105) -> np.ndarray:
    """A bool image like Omniglot's: white (True) background, a few black stroke pixels."""
    img = np.ones((size, size), dtype=bool)
    r, c = rng.integers(10, size - 30, size=2)
    img[r:r + 20, c:c + 3] = False
    img[r:r + 3, c:c + 20] = False
    return img


def write_omniglot_zip(path: Path, top: str, alphabets: dict[str, int], *, seed: int,
                       chars: int = 2) -> dict[str, np.ndarray]:
    """Zip ``top/<alphabet>/characterNN/<id>_<rr>.png`` with ``alphabets[a]`` drawers each.

    Returns:
        ``alphabet/character/file`` -> the bool image written.
    """
    rng, written = np.random.default_rng(seed), {}
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"{top}/", b"")
        for alphabet, drawers in alphabets.items():
            for c in range(1, chars + 1):
                for r in range(1, drawers + 1):
                    # file ids depend on the alphabet only, so one alphabet in two zips
                    # gives the same paths (as Greek and Latin in the background-small zips)
                    ident = sum(alphabet.encode()) + c
                    key = f"{alphabet}/character{c:02d}/{ident:04d}_{r:02d}.png"
                    img = omniglot_image(rng)
                    zf.writestr(f"{top}/{key}", png_bytes(img, mode="1"))
                    written[key] = img
    return written


def write_notmnist_tar(path: Path, per_letter: dict[str, int], *, seed: int,
                       empty: tuple[str, ...] = ()) -> dict[str, list[np.ndarray]]:
    """A ``notMNIST_small/<letter>/<name>.png`` archive; ``empty`` adds 0-byte PNGs.

    Returns:
        letter -> images in file-name order.
    """
    rng, written = np.random.default_rng(seed), {}
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        def add(name: str, data: bytes) -> None:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))

        for letter, count in per_letter.items():
            written[letter] = []
            for k in range(count):
                img = rng.integers(0, 256, size=(28, 28), dtype=np.uint8)
                add(f"notMNIST_small/{letter}/f{k:03d}.png", png_bytes(img))
                written[letter].append(img)
        for name in empty:
            add(f"notMNIST_small/{name}", b"")
    return written


def write_cifar_sprite(path: Path, images: np.ndarray) -> str:
    """Write uint8 (N, 32, 32, 3) as a convnetjs sprite (row = image); return its sha256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png_bytes(images.reshape(len(images), 32 * 32, 3)))
    return sha256_file(path)


def write_test_batch(path: Path, images: np.ndarray) -> str:
    """Write uint8 (N, 32, 32, 3) as a CIFAR-10 python batch pickle; return its sha256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = images.transpose(0, 3, 1, 2).reshape(len(images), -1)
    with open(path, "wb") as f:
        pickle.dump({b"batch_label": b"testing batch 1 of 1", b"data": data,
                     b"labels": [0] * len(images)}, f)
    return sha256_file(path)


def assert_missing(ood_set: OODFileSet, root: Path, *parts: str) -> None:
    """``ood_set`` finds nothing under the empty ``root``, and its error names each of
    ``parts`` and every way out (--data-root, $ROBUSTBNN_DATA, --download)."""
    assert not ood_set.available(root)
    with pytest.raises(DataError) as info:
        ood_set.load(root)
    message = str(info.value)
    for part in parts:
        assert part in message, (part, message)
    assert "--data-root" in message and "ROBUSTBNN_DATA" in message and "--download" in message


def plant(path: Path, data: bytes) -> dict[str, str]:
    """Write ``data`` to ``path`` (making its folder); the checksums that accept it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return {path.name: sha256_file(path)}
