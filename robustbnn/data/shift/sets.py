"""Shifted test sets by kind and level: ``rotated`` by an angle, ``corrupted`` by an MNIST-C name.

The two kinds of :data:`robustbnn.results.names.SHIFTS` are data, not strings parsed back: a
shifted set is ``(kind, level)``, a :class:`~robustbnn.results.names.ShiftKind` and an angle in
degrees for ``rotated`` or a corruption name for ``corrupted``. Image i of a set is the shifted
i-th test image, drawn from ``seed`` and i alone (:func:`~robustbnn.data.shift.mnist_c.corrupt`),
so the first n images of a set do not depend on how many are shifted.
"""

from __future__ import annotations

import torch
from torch import Tensor

from robustbnn.data.recipes import load_recipe, recipe_names
from robustbnn.data.shift.mnist_c import CORRUPTIONS, MNIST_C, corrupt
from robustbnn.data.shift.rotate import rotate
from robustbnn.errors import ConfigError
from robustbnn.results import names as N
from robustbnn.results.names import ShiftKind

__all__ = ["LEVEL_KNOB", "check_dataset_fits", "check_levels", "levels", "shifted"]

LEVEL_KNOB = {ShiftKind.ROTATED: N.ANGLE, ShiftKind.CORRUPTED: N.CORRUPTION}
"""The setting knob that names a shifted set's level, per kind."""


def levels(kind: ShiftKind, angles: tuple[int, ...], corruptions: tuple[str, ...]) -> list:
    """The levels a run scores for ``kind``: its angles, or its corruptions (() = all 15)."""
    if kind == ShiftKind.ROTATED:
        return [int(a) for a in angles]
    return list(corruptions or CORRUPTIONS)


def check_levels(kinds: tuple[ShiftKind, ...], angles: tuple[int, ...],
                 corruptions: tuple[str, ...]) -> None:
    """Every angle and corruption named by a config exists (before any work starts; the kinds
    are checked with the config, :meth:`robustbnn.bench_config.BenchConfig.check`).

    Raises:
        ConfigError: For an empty or duplicated angle list.
        UnknownNameError: For an unknown corruption (the known ones listed).
    """
    if ShiftKind.ROTATED in kinds and (not angles or len(set(angles)) != len(angles)):
        raise ConfigError(f"shift_angles must list distinct angles, got {list(angles)}")
    for name in corruptions:
        MNIST_C.get(name)


def check_dataset_fits(kinds: tuple[ShiftKind, ...], dataset: str) -> None:
    """The shift kinds can shift ``dataset``'s images (before any work starts): MNIST-C's
    corruptions are defined on 28×28 digits, so ``corrupted`` needs a dataset of that shape.

    A dataset without a shipped recipe (a plug-in's) is not checked here; its images meet the
    corruptions' own shape check when its shift cells run.

    Raises:
        ConfigError: For ``corrupted`` on a dataset whose recipe gives another image shape;
            names the dataset, its shape and the way out.
    """
    if ShiftKind.CORRUPTED not in kinds or dataset not in recipe_names():
        return
    shape = tuple(load_recipe(dataset).get("image_shape", (28, 28)))
    if shape != (28, 28):
        others = [k.value for k in kinds if k != ShiftKind.CORRUPTED]
        way_out = f"--shift {','.join(others)}" if others else "no --shift"
        raise ConfigError(f"shift 'corrupted' (MNIST-C) needs 28x28 images; dataset {dataset} "
                          f"has {'x'.join(map(str, shape))}: run it with {way_out}")


def shifted(x: Tensor, kind: ShiftKind, level: int | str, *, seed: int = 0) -> Tensor:
    """Test images ``x`` (N, 1, 28, 28) shifted by ``level`` of ``kind``; image i keyed by i.

    Raises:
        ConfigError: For an unknown kind.
    """
    if kind == ShiftKind.ROTATED:
        return rotate(x, float(level))
    if kind == ShiftKind.CORRUPTED:
        return corrupt(x, str(level), seed=seed, indices=torch.arange(len(x)))
    raise ConfigError(f"unknown shift kind {kind!r}; known: {[k.value for k in LEVEL_KNOB]}")
