"""Dataset shift: rotated images and the MNIST-C corruptions, applied to a test split.

- :mod:`~robustbnn.data.shift.rotate`: ``rotate(x, degrees)`` and ``ROTATIONS`` (0°-180°).
- :mod:`~robustbnn.data.shift.mnist_c`: ``corrupt(x, name, seed=...)``, the fifteen
  corruptions of MNIST-C by name in ``CORRUPTIONS`` (Mu & Gilmer 2019).
"""

from __future__ import annotations

from robustbnn.data.shift.mnist_c import CORRUPTIONS, MNIST_C, corrupt
from robustbnn.data.shift.rotate import ROTATIONS, rotate

__all__ = ["CORRUPTIONS", "MNIST_C", "ROTATIONS", "corrupt", "rotate"]
