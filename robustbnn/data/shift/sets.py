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

from robustbnn.data.shift.mnist_c import CORRUPTIONS, MNIST_C, corrupt
from robustbnn.data.shift.rotate import rotate
from robustbnn.errors import ConfigError
from robustbnn.results import names as N
from robustbnn.results.names import ShiftKind

__all__ = ["LEVEL_KNOB", "check_levels", "levels", "shifted"]

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
