"""Rotated images: the gradual shift of Ovadia et al. (2019), Fig. 1 (rotated MNIST).

Rotation is about the image centre, counter-clockwise for positive angles (the direction of
``torch.rot90(x, 1, dims=(-2, -1))``), with bilinear interpolation and zeros where the
rotated image leaves the frame; the output keeps the input's shape (no expansion). It is
torchvision's :func:`~torchvision.transforms.functional.rotate` on the whole batch.

References:
    Ovadia et al., "Can You Trust Your Model's Uncertainty? Evaluating Predictive Uncertainty
    Under Dataset Shift", NeurIPS 2019, https://arxiv.org/abs/1906.02530.
"""

from __future__ import annotations

from torch import Tensor
from torchvision.transforms.functional import InterpolationMode
from torchvision.transforms.functional import rotate as _tv_rotate

__all__ = ["ROTATIONS", "rotate"]

ROTATIONS: tuple[int, ...] = tuple(range(0, 181, 15))
"""Angles in degrees, 0° to 180° in 15° steps (Ovadia et al. 2019, Fig. 1)."""


def rotate(x: Tensor, degrees: float) -> Tensor:
    """Rotate every image of a batch about its centre.

    Args:
        x: Images in [0, 1], shape (N, C, H, W) (C = 1 for the MNIST family).
        degrees: Angle in degrees, counter-clockwise for positive values.

    Returns:
        Rotated images, same shape, dtype and device as ``x``, in [0, 1]. A multiple of 360°
        returns a copy of ``x`` exactly (interpolation would add rounding of about 1e-6).

    Raises:
        ValueError: If ``x`` is not a 4-D floating-point tensor.

    Example:
        >>> import torch
        >>> x = torch.zeros(1, 1, 3, 3)
        >>> x[0, 0, 1, 2] = 1.0  # the pixel right of centre
        >>> rotate(x, 90)[0, 0].round(decimals=4)  # moves above centre
        tensor([[0., 1., 0.],
                [0., 0., 0.],
                [0., 0., 0.]])
    """
    if x.ndim != 4 or not x.dtype.is_floating_point:
        raise ValueError(f"x must be a float tensor of shape (N, C, H, W), got {x.dtype} "
                         f"{tuple(x.shape)}")
    if float(degrees) % 360.0 == 0.0:
        return x.clone()
    out = _tv_rotate(x, float(degrees), interpolation=InterpolationMode.BILINEAR)
    # Bilinear weights sum to 1 only up to rounding; keep the [0, 1] pixel contract.
    return out.clamp_(0.0, 1.0)
