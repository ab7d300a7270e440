"""Full MNIST from the four official IDX files, split 50,000 / 10,000 / 10,000.

Validation is the last 10,000 images of the official training set (the split of
deeplearning.net's ``mnist.pkl.gz``, used by Bayesian Hypernetworks); test is the official
t10k set. Files, checksums and folder layout come from ``datasets/mnist.json``.

References:
    LeCun, Bottou, Bengio & Haffner, "Gradient-based learning applied to document
    recognition", 1998. Krueger et al., "Bayesian Hypernetworks", 2017,
    https://arxiv.org/abs/1710.04759
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from robustbnn.data.bundle import make_bundle
from robustbnn.data.fetch import Remote, fetch_all
from robustbnn.data.idx import read_idx
from robustbnn.data.recipes import load_recipe
from robustbnn.data.registry import DATASETS, DatasetSpec
from robustbnn.data.root import ENV_VAR, verify_sha256
from robustbnn.data.types import DataBundle
from robustbnn.errors import DataError

ROLES = ("train_images", "train_labels", "test_images", "test_labels")


def default_checksums(recipe: Mapping[str, Any] | None = None) -> dict[str, str]:
    """File name -> official sha256, for the gzipped and the uncompressed names."""
    files = (recipe or load_recipe("mnist"))["files"]
    sums = {f["name"]: f["sha256"] for f in files.values()}
    sums.update({f["uncompressed"]["name"]: f["uncompressed"]["sha256"] for f in files.values()})
    return sums


def _present(folder: Path, recipe: Mapping[str, Any]) -> dict[str, Path]:
    """Role -> path of the files present in ``folder``, preferring the gzipped copy."""
    found = {}
    for role in ROLES:
        entry = recipe["files"][role]
        for name in (entry["name"], entry["uncompressed"]["name"]):
            if (folder / name).is_file():
                found[role] = folder / name
                break
    return found


def find_mnist(data_root: Path, recipe: Mapping[str, Any] | None = None) -> dict[str, Path] | None:
    """Role -> path in the first layout folder holding all four files, or None."""
    recipe = recipe or load_recipe("mnist")
    for sub in recipe["layout"]["folders"]:
        found = _present(Path(data_root) / sub, recipe)
        if len(found) == len(ROLES):
            return found
    return None


def mnist_available(data_root: Path) -> bool:
    """True if all four MNIST files are present under ``data_root`` (no hashing)."""
    return find_mnist(data_root) is not None


def _missing_error(data_root: Path, recipe: Mapping[str, Any]) -> DataError:
    """Name the missing files of the most complete folder (``mnist/`` on a tie) and the fix."""
    folders = [Path(data_root) / sub for sub in recipe["layout"]["folders"]]
    best = max(folders, key=lambda f: len(_present(f, recipe)))  # max keeps the first on ties
    present = _present(best, recipe)
    missing = [recipe["files"][r]["name"] for r in ROLES if r not in present]
    others = ", ".join(str(f) for f in folders if f != best)
    return DataError(
        f"MNIST files missing in {best}: {', '.join(missing)} (also looked in {others}); "
        f"copy the four IDX .gz files there, point --data-root or {ENV_VAR} at a folder that "
        f"has them, or rerun with --download to fetch them"
    )


def remotes(recipe: Mapping[str, Any], checksums: Mapping[str, str] | None = None
            ) -> list[Remote]:
    """The four ``.gz`` files as :class:`~robustbnn.data.fetch.Remote` s: into ``mnist/``
    (the first layout folder), from the recipe's mirrors, checked by ``checksums`` (default:
    the recipe's sha256s)."""
    checksums = default_checksums(recipe) if checksums is None else checksums
    folder = recipe["layout"]["folders"][0]
    bases = recipe["download"]["mirrors"]
    names = [recipe["files"][r]["name"] for r in ROLES]
    return [Remote(folder=folder, name=n, urls=tuple(b + n for b in bases),
                   digest=checksums[n], what=recipe["title"].split()[0]) for n in names]


def _check(ok: bool, path: Path, problem: str) -> None:
    if not ok:
        raise DataError(f"{path}: {problem}; replace it with the official MNIST file")


def load_mnist(
    data_root: Path,
    *,
    download: bool = False,
    checksums: Mapping[str, str] | None = None,
    val_size: int | None = None,
    name: str = "mnist",
) -> DataBundle:
    """Load MNIST from ``data_root``, verifying every file's sha256 before parsing it.

    Args:
        data_root: Folder holding ``mnist/`` (or the files directly, or ``MNIST/raw/``).
        download: If files are missing, fetch the four ``.gz`` files into ``mnist/``
            (:func:`~robustbnn.data.fetch.fetch`; needs network or ``$ROBUSTBNN_MIRROR``).
        checksums: File name -> expected sha256; defaults to the official ones from the
            recipe. Tests pass the digests of their own small fixture files.
        val_size: Images taken from the end of the training set for validation; defaults to
            the recipe's 10,000; 0 leaves the validation split empty.
        name: The bundle's name (``mnist``, or ``mnist60k`` for all 60,000 in training).

    Returns:
        A bundle with 50,000 train, 10,000 val and 10,000 test images (N, 1, 28, 28).

    Raises:
        DataError: If files are missing (and ``download`` is False), the download fails, a
            checksum does not match, or a file is not a valid IDX file of the right shape.
    """
    recipe = load_recipe(name)
    checksums = default_checksums(recipe) if checksums is None else checksums
    val_size = int(recipe["splits"]["val_size"]) if val_size is None else val_size
    paths = find_mnist(data_root, recipe)
    if paths is None and download:
        fetch_all(remotes(recipe, checksums), data_root)
        paths = find_mnist(data_root, recipe)
    if paths is None:
        raise _missing_error(data_root, recipe)
    for path in paths.values():
        if path.name not in checksums:
            raise DataError(f"no sha256 known for {path}; pass checksums for every file")
        verify_sha256(path, checksums[path.name])
    data = {role: read_idx(path) for role, path in paths.items()}

    num_classes, shape = int(recipe["num_classes"]), tuple(recipe["image_shape"])
    for part in ("train", "test"):
        x, y = data[f"{part}_images"], data[f"{part}_labels"]
        xp, yp = paths[f"{part}_images"], paths[f"{part}_labels"]
        _check(x.dtype == np.uint8 and x.shape[1:] == shape, xp,
               f"expected uint8 images of shape (N, {shape[0]}, {shape[1]}), got {x.dtype} "
               f"{x.shape}")
        _check(y.dtype == np.uint8 and y.ndim == 1 and len(y) == len(x), yp,
               f"expected {len(x)} uint8 labels, got {y.dtype} {y.shape}")
        _check(int(y.max(initial=0)) < num_classes, yp, f"labels outside 0..{num_classes - 1}")
    n_train = len(data["train_labels"]) - val_size
    _check(n_train > 0, paths["train_labels"],
           f"{len(data['train_labels'])} training images cannot give {val_size} for validation")

    x, y = data["train_images"], data["train_labels"]
    splits = {
        "train": (x[:n_train], y[:n_train]),
        "val": (x[n_train:], y[n_train:]),
        "test": (data["test_images"], data["test_labels"]),
    }
    source = "; ".join(str(paths[role]) for role in ROLES)
    return make_bundle(name, splits, num_classes=num_classes, source=source)


def load_mnist60k(data_root: Path, *, download: bool = False,
                  checksums: Mapping[str, str] | None = None) -> DataBundle:
    """All 60,000 official training images for training, no validation split, t10k for test.

    The protocol of the Bayes by Backprop PyTorch tutorial (and of Li & Gal's code), which
    select no epoch: models trained on it need ``selection="last"``.
    """
    return load_mnist(data_root, download=download, checksums=checksums, name="mnist60k")


DATASETS.register(
    "mnist",
    DatasetSpec(
        name="mnist",
        description="MNIST digits from the official IDX files: 50k train / 10k val / 10k test",
        load=load_mnist,
        available=mnist_available,
    ),
)

DATASETS.register(
    "mnist60k",
    DatasetSpec(
        name="mnist60k",
        description="MNIST, all 60k training images for training, no validation, 10k test",
        load=load_mnist60k,
        available=mnist_available,
    ),
)
