"""Fixtures for the data tests: a tiny MNIST folder written by the test itself (no network)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from robustbnn.data import sha256_file, write_idx

NAMES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}


@dataclass
class TinyMnist:
    """Arrays of a tiny MNIST and a writer that lays them out like the real files."""

    arrays: dict[str, np.ndarray]

    def write(self, folder: Path, *, gz: bool = True) -> dict[str, str]:
        """Write the four files into ``folder``; return file name -> sha256."""
        folder.mkdir(parents=True, exist_ok=True)
        sums = {}
        for role, name in NAMES.items():
            path = folder / (name + ".gz" if gz else name)
            write_idx(path, self.arrays[role])
            sums[path.name] = sha256_file(path)
        return sums


@pytest.fixture
def tiny_mnist() -> TinyMnist:
    """12 training images (the last 4 become validation) and 5 test images, 28x28 uint8."""
    rng = np.random.default_rng(0)
    return TinyMnist({
        "train_images": rng.integers(0, 256, size=(12, 28, 28), dtype=np.uint8),
        "train_labels": (np.arange(12) % 10).astype(np.uint8),
        "test_images": rng.integers(0, 256, size=(5, 28, 28), dtype=np.uint8),
        "test_labels": np.array([3, 1, 4, 1, 5], dtype=np.uint8),
    })


@pytest.fixture
def mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """An empty local mirror (``tests._mirror``) that ``$ROBUSTBNN_MIRROR`` points at: put
    files under ``mirror.root/<folder>/`` and ``--download`` fetches them from it."""
    from robustbnn.data.fetch import MIRROR_ENV
    from tests._mirror import serving

    with serving(tmp_path / "mirror") as served:
        monkeypatch.setenv(MIRROR_ENV, served.url)
        yield served
