"""Bring OOD images to the training set's resolution by area averaging, or refuse.

The OOD sets load at 28x28 (:mod:`robustbnn.data.ood_sets`); a dataset at another resolution
(``mnist5k_7x7``, the HMC reference task's data of issue 32) must score them at its own, or its
models would see inputs of a shape they were never built for. Shrinking by an integer factor k
per side averages each k x k block, x'_{ij} = (1/k^2) sum_{a,b<k} x_{ki+a, kj+b}: the same
operation that made the pooled dataset (there followed by a rounding to uint8, which OOD
images skip: they stay float), so in- and out-of-distribution images are alike in everything
but content. Anything else (a side that does not divide, or an enlargement) has no
unambiguous area mean and is refused.
"""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor

from robustbnn.errors import ConfigError

__all__ = ["resize_ood"]


def resize_ood(x: Tensor, shape: tuple[int, int], *, name: str) -> Tensor:
    """Shrink OOD images to ``shape`` by averaging whole blocks (area interpolation).

    Args:
        x: Images (N, C, H, W).
        shape: The target (h, w): the dataset's image height and width.
        name: The OOD set's name, for the error message.

    Returns:
        ``x`` itself when (H, W) == (h, w) (no operation, so the images and their digest are
        unchanged); else ``avg_pool2d(x, (H // h, W // w))`` of shape (N, C, h, w), equal to
        ``interpolate(x, (h, w), mode="area")`` for integer factors.

    Raises:
        ConfigError: If h does not divide H or w does not divide W (an enlargement included),
            naming the set, both shapes and the way out.
    """
    (big_h, big_w), (h, w) = x.shape[-2:], shape
    if (big_h, big_w) == (h, w):
        return x
    if h < 1 or w < 1 or big_h % h or big_w % w:
        raise ConfigError(
            f"OOD set {name!r} has {big_h}x{big_w} images and the dataset {h}x{w}: block "
            f"averaging needs each side of {big_h}x{big_w} to be a whole multiple of the "
            f"dataset's; drop {name} from --ood, or use a dataset whose sides divide "
            f"{big_h}x{big_w} (7x7, 14x14 for 28x28)")
    return F.avg_pool2d(x, (big_h // h, big_w // w))
