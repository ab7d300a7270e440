"""The ``DATASETS`` registry and :func:`load_dataset`, the one entry point for data."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robustbnn.data.checks import check_bundle
from robustbnn.data.root import resolve_data_root
from robustbnn.data.types import DataBundle, SplitError
from robustbnn.errors import DataError
from robustbnn.registry import Registry


@dataclass(frozen=True)
class SourceSpec:
    """How to get one registered data source: a dataset or an OOD image set.

    Args:
        name: Registry name (snake_case, stable: it appears in configs and results).
        description: One line for ``--help`` and reports.
        load: The loader; its signature is the registry's (see the subclasses). It raises
            ``DataError`` with the fix when files are missing or corrupt.
        available: ``available(data_root) -> bool``: are the files present locally? Cheap
            (no hashing, no parsing); always True for embedded sources.
        embedded: True if the data is generated or ships with an installed package, so
            ``data_root`` is ignored and nothing is downloaded.
    """

    name: str
    description: str
    load: Callable[..., Any]
    available: Callable[[Path], bool]
    embedded: bool = False

    def root(self, data_root: str | Path | None) -> Path:
        """The folder to load from: ``data_root`` resolved, or ``Path()`` when embedded.

        Raises:
            DataError: If the data root does not exist (see :func:`resolve_data_root`).
        """
        return Path() if self.embedded else resolve_data_root(data_root)


@dataclass(frozen=True)
class DatasetSpec(SourceSpec):
    """How to get one dataset: ``load(data_root, *, download) -> DataBundle``.

    The fields are those of :class:`SourceSpec`; the name equals the module name.
    """


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
        DataError: If files are missing, corrupt, or the data root is wrong; or if a split's
            images are not finite and in [0, 1], train or test is empty, or a label is not a
            class (:func:`~robustbnn.data.checks.check_bundle`), or a split is of the wrong
            dtype or shape (:class:`~robustbnn.data.types.Split`), naming the dataset.
    """
    spec = DATASETS.get(name)
    try:
        data = spec.load(spec.root(data_root), download=download)
    except SplitError as err:  # a plug-in's split of the wrong dtype or shape
        raise DataError(f"dataset {name!r}: {err}: fix its loader, or train on another "
                        "--dataset") from None
    check_bundle(data, name)
    return data
