"""Shifted test sets by kind and level: ``rotated`` by an angle, ``corrupted`` by an MNIST-C name.

The two kinds of :data:`robustbnn.results.names.SHIFTS` are data, not strings parsed back: a
shifted set is ``(kind, level)``, with level an angle in degrees for ``rotated`` and a
corruption name for ``corrupted``. Image i of a set is the shifted i-th test image, drawn from
``seed`` and i alone (:func:`~robustbnn.data.shift.mnist_c.corrupt`), so the first n images of
a set do not depend on how many are shifted.
"""

from __future__ import annotations

import torch
from torch import Tensor

from robustbnn.data.shift.mnist_c import CORRUPTIONS, MNIST_C, corrupt
from robustbnn.data.shift.rotate import rotate
from robustbnn.errors import ConfigError
from robustbnn.results import names as N

__all__ = ["LEVEL_KNOB", "check_levels", "levels", "shifted"]

LEVEL_KNOB = {N.SHIFT_ROTATED: N.ANGLE, N.SHIFT_CORRUPTED: N.CORRUPTION}
"""The setting knob that names a shifted set's level, per kind."""


def levels(kind: str, angles: tuple[int, ...], corruptions: tuple[str, ...]) -> list:
    """The levels a run scores for ``kind``: its angles, or its corruptions (() = all 15)."""
    if kind == N.SHIFT_ROTATED:
        return [int(a) for a in angles]
    return list(corruptions or CORRUPTIONS)


def check_levels(kinds: tuple[str, ...], angles: tuple[int, ...],
                 corruptions: tuple[str, ...]) -> None:
    """Every kind, angle and corruption named by a config exists (before any work starts).

    Raises:
        ConfigError: For an unknown kind, an empty or duplicated angle list.
        UnknownNameError: For an unknown corruption (the known ones listed).
    """
    unknown = sorted(set(kinds) - set(LEVEL_KNOB))
    if unknown:
        raise ConfigError(f"unknown shift kind(s) {unknown}; known: {list(LEVEL_KNOB)}")
    if N.SHIFT_ROTATED in kinds and (not angles or len(set(angles)) != len(angles)):
        raise ConfigError(f"shift_angles must list distinct angles, got {list(angles)}")
    for name in corruptions:
        MNIST_C.get(name)


def shifted(x: Tensor, kind: str, level: int | str, *, seed: int = 0) -> Tensor:
    """Test images ``x`` (N, 1, 28, 28) shifted by ``level`` of ``kind``; image i keyed by i.

    Raises:
        ConfigError: For an unknown kind.
    """
    if kind == N.SHIFT_ROTATED:
        return rotate(x, float(level))
    if kind == N.SHIFT_CORRUPTED:
        return corrupt(x, str(level), seed=seed, indices=torch.arange(len(x)))
    raise ConfigError(f"unknown shift kind {kind!r}; known: {list(LEVEL_KNOB)}")
