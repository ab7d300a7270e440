"""The ``DATASETS`` registry and :func:`load_dataset`, the one entry point for data."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from robustbnn.data.root import resolve_data_root
from robustbnn.data.types import DataBundle
from robustbnn.registry import Registry


@dataclass(frozen=True)
class DatasetSpec:
    """How to get one dataset.

    Args:
        name: Registry name (snake_case, equal to the module name).
        description: One line for ``--help`` and reports.
        load: ``load(data_root, *, download) -> DataBundle``; raises ``DataError`` with the fix
            when files are missing or corrupt.
        available: ``available(data_root) -> bool``: are the files present locally? Cheap
            (no hashing, no parsing).
        embedded: True if the data ships with an installed package and ``data_root`` is ignored.
    """

    name: str
    description: str
    load: Callable[..., DataBundle]
    available: Callable[[Path], bool]
    embedded: bool = False


DATASETS: Registry[DatasetSpec] = Registry("dataset")


def load_dataset(
    name: str, data_root: str | Path | None = None, *, download: bool = False
) -> DataBundle:
    """Load a registered dataset.

    Args:
        name: A name from ``DATASETS.names()``.
        data_root: The ``--data-root`` value; None falls back to ``$ROBUSTBNN_DATA``, then to
            the user cache folder (see :func:`resolve_data_root`). Ignored for embedded data.
        download: Allow downloading missing files (needs network).

    Returns:
        The dataset's :class:`DataBundle`.

    Raises:
        UnknownNameError: If ``name`` is not registered; lists the known names.
        DataError: If files are missing, corrupt, or the data root is wrong.
    """
    spec = DATASETS.get(name)
    root = Path() if spec.embedded else resolve_data_root(data_root)
    return spec.load(root, download=download)
