"""Datasets: a registry of loaders that return a :class:`DataBundle` of train/val/test splits.

Each dataset module registers itself in ``DATASETS`` when imported below (one line each).
Data files live under the data root (``--data-root``, else ``$ROBUSTBNN_DATA``, else the user
cache folder) and are checked against the sha256 sums in the recipes (``datasets/*.json``).

Example:
    >>> from robustbnn.data import load_dataset
    >>> bundle = load_dataset("mnist5k")
    >>> len(bundle.train), len(bundle.val), len(bundle.test)
    (3600, 400, 1000)
"""

from __future__ import annotations

from robustbnn.data import mnist, mnist5k  # noqa: F401  (registers the datasets)
from robustbnn.data.idx import read_idx, write_idx
from robustbnn.data.registry import DATASETS, DatasetSpec, load_dataset
from robustbnn.data.root import resolve_data_root, sha256_file, verify_sha256
from robustbnn.data.types import DataBundle, Split

__all__ = [
    "DATASETS",
    "DataBundle",
    "DatasetSpec",
    "Split",
    "load_dataset",
    "read_idx",
    "resolve_data_root",
    "sha256_file",
    "verify_sha256",
    "write_idx",
]
