"""Test images of an MNIST-format torchvision dataset (Fashion-MNIST, KMNIST) for OOD use.

The one implementation of both sets: ``fashion_mnist.py`` and ``kmnist.py`` only name their
four constants (title, folder, torchvision class, md5) in a :class:`TorchvisionIdxSet`.

The t10k images file ``t10k-images-idx3-ubyte.gz`` is looked for in ``<root>/<folder>/`` and
in torchvision's ``<root>/<Class>/raw/``, checked against torchvision's md5 and read with
:func:`robustbnn.data.idx.read_idx`. Labels are not needed. With ``download=True`` the images
file is fetched into ``<root>/<folder>/`` from torchvision's mirrors (or ``$ROBUSTBNN_MIRROR``)
and checked against the md5 before it is put in place (:mod:`robustbnn.data.fetch`). Both
preprocessings give [0, 1] (the reference did not use these sets).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from torch import Tensor

from robustbnn.data._ood import (
    WAYS_OUT,
    OODFileSet,
    first,
    known_digest,
    uint8_to_unit,
    verify_digest,
)
from robustbnn.data.fetch import Remote, fetch
from robustbnn.data.idx import read_idx
from robustbnn.errors import DataError

IMAGES = "t10k-images-idx3-ubyte.gz"


@dataclass(frozen=True)
class TorchvisionIdxSet(OODFileSet):
    """Where one torchvision MNIST-format dataset lives and how to check it.

    Args:
        title: Human name for messages ("Fashion-MNIST").
        folder: Our folder under the data root ("fashion_mnist").
        tv_class: The ``torchvision.datasets`` class name ("FashionMNIST"); its files land in
            ``<root>/<tv_class>/raw``.
        digests: ``{IMAGES: torchvision's md5 of t10k-images-idx3-ubyte.gz}``.
        mirrors: Base URLs the images file is published under (torchvision's ``mirrors``).
    """

    title: str
    folder: str
    tv_class: str
    digests: Mapping[str, str]
    mirrors: tuple[str, ...]

    def remote(self, checksums: Mapping[str, str]) -> Remote:
        """What ``--download`` fetches: the images file into our folder, from the mirrors."""
        return Remote(folder=self.folder, name=IMAGES,
                      urls=tuple(m + IMAGES for m in self.mirrors),
                      digest=checksums[IMAGES], what=self.title)

    def folders(self, data_root: Path) -> tuple[Path, Path]:
        """Our folder, then torchvision's raw folder."""
        return Path(data_root) / self.folder, Path(data_root) / self.tv_class / "raw"

    def find(self, data_root: Path) -> Path | None:
        """The images file in the first folder that has it, or None."""
        for folder in self.folders(data_root):
            if (folder / IMAGES).is_file():
                return folder / IMAGES
        return None

    def available(self, data_root: Path) -> bool:
        """True if the gzipped test images are present (no hashing)."""
        return self.find(data_root) is not None

    def _missing(self, data_root: Path) -> DataError:
        """Name both folders, an uncompressed copy if there is one, and the ways out."""
        ours, tv = self.folders(data_root)
        bare = [str(f / IMAGES[:-3]) for f in (ours, tv) if (f / IMAGES[:-3]).is_file()]
        note = (f" (found {bare[0]}, but the checksum is known for the .gz only)"
                if bare else "")
        return DataError(f"{self.title} test images missing: no {IMAGES} in {ours} or {tv}"
                         f"{note}; copy it there, {WAYS_OUT}")

    def read(self, data_root: Path, n: int, *, download: bool,
             checksums: Mapping[str, str]) -> Tensor:
        """The first ``n`` test images in file order (all when ``n <= 0``), (N, 1, 28, 28).

        Raises:
            DataError: If the file is missing (and ``download`` is False), the download
                fails, or the file fails its checksum or is not 28×28 uint8 IDX.
        """
        path = self.find(data_root)
        if path is None and download:
            path = fetch(self.remote(checksums), Path(data_root))
        if path is None:
            raise self._missing(data_root)
        verify_digest(path, known_digest(path, checksums))
        images = read_idx(path)
        if images.dtype != np.uint8 or images.shape[1:] != (28, 28):
            raise DataError(f"{path}: expected uint8 images of shape (N, 28, 28), got "
                            f"{images.dtype} {images.shape}; replace it with the official file")
        return uint8_to_unit(np.ascontiguousarray(first(images, n)))
