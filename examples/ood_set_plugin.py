"""An OOD-set plug-in: MNIST digits with inverted intensities (``inverted_digits``).

An OOD set is an :class:`~robustbnn.data.ood_sets.OODSpec` registered in ``OOD_DATASETS``:
a ``load(data_root, n, *, seed, preprocessing, download)`` that returns float32 images of
shape (N, 1, 28, 28) in [0, 1] (the in-distribution's pixel space), and an ``available``
test. ``load_ood`` refuses, by the set's name, images of another dtype, shape or range, none at
all, or a NaN pixel (docs/ood.md, "Checked when they load"); a set on another scale under
``bhn_reference`` declares it with ``OODSpec(..., reference_range=(lo, hi))``. Its first
``n`` images must not depend on ``n`` and must be the same on every call: the bench hashes
the images it scores into the ids of the cells that use them, so a changed image recomputes
exactly those cells.

Inverted digits (1 − x: white strokes on black become black on white) keep every shape of the
training classes and change only the intensity statistics, a standard near-OOD probe: a
model whose uncertainty follows the input's statistics flags them, one that reads the shapes
may not. The images are the first ``n`` test digits of the embedded ``mnist5k`` set, so the set
needs no download.

Run it from the repository root::

    robustbnn bench --suite smoke --plugin examples.ood_set_plugin --ood inverted_digits,uniform \
        --out runs/inverted_digits
"""

from __future__ import annotations

from pathlib import Path

from torch import Tensor

from robustbnn.data.mnist5k import load_mnist5k
from robustbnn.data.ood_sets import OOD_DATASETS, OODSpec
from robustbnn.errors import ConfigError


def load_inverted_digits(data_root: Path | None = None, n: int = 0, *, seed: int = 0,
                         preprocessing: str = "unit", download: bool = False) -> Tensor:
    """The first ``n`` (all 1,000 when ``n <= 0``) mnist5k test digits, inverted: 1 − x.

    ``seed`` is unused (a file-based set has one fixed order); only the ``unit`` scale exists.
    """
    if preprocessing != "unit":
        raise ConfigError(f"inverted_digits has only the 'unit' preprocessing, not "
                          f"{preprocessing!r}; run with --ood-preprocessing unit")
    test = load_mnist5k().test.x  # (1000, 1, 28, 28) in [0, 1]
    return 1.0 - (test[:n] if n > 0 else test)


OOD_DATASETS.register("inverted_digits", OODSpec(
    "inverted_digits", "mnist5k test digits with inverted intensities (1 - x)",
    load_inverted_digits, lambda data_root=None: True, embedded=True))
