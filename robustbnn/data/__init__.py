"""Datasets: a registry of loaders that return a :class:`DataBundle` of train/val/test splits.

Each dataset module registers itself in ``DATASETS`` when imported below (one line each).
Data files live under the data root (``--data-root``, else ``$ROBUSTBNN_DATA``, else the user
cache folder) and are checked against the sha256 sums in the recipes (``datasets/*.json``).
OOD image sets (noise, notMNIST, Omniglot, CIFARbw, ...) have their own registry,
``OOD_DATASETS``, and entry point :func:`load_ood` (see :mod:`robustbnn.data.ood_sets`).

Example:
    >>> from robustbnn.data import load_dataset
    >>> bundle = load_dataset("mnist5k")
    >>> len(bundle.train), len(bundle.val), len(bundle.test)
    (3600, 400, 1000)
"""

from __future__ import annotations

from robustbnn.data import mnist, mnist5k, mnist5k_7x7  # noqa: F401  (registers the datasets)
from robustbnn.data.idx import read_idx, write_idx
from robustbnn.data.ood_sets import OOD_DATASETS, OODSpec, load_ood
from robustbnn.data.registry import DATASETS, DatasetSpec, load_dataset
from robustbnn.data.root import resolve_data_root, sha256_file, verify_sha256
from robustbnn.data.types import DataBundle, Split

__all__ = [
    "DATASETS",
    "DataBundle",
    "DatasetSpec",
    "OODSpec",
    "OOD_DATASETS",
    "Split",
    "load_dataset",
    "load_ood",
    "read_idx",
    "resolve_data_root",
    "sha256_file",
    "verify_sha256",
    "write_idx",
]
