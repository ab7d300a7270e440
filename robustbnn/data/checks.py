"""Images checked where they enter: an OOD set's and a dataset's, against the range they declare.

A loader, a plug-in's above all, can return images the models were never meant to see: in
[0, 255], centred where the preprocessing is [0, 1], of an integer dtype, flattened, none at
all, or with a NaN pixel. Scored, each gives either a number without a word (a set in
[0, 255] moved the mean OOD AUROC of issue 49 from 0.8706 to 0.6530) or an error that names
neither the set nor the fix (``mat1 and mat2 must have the same dtype``), and a NaN pixel
reads as the model's numerical fault. So every set is checked once, when it loads
(:func:`robustbnn.data.ood_sets.load_ood`; the bench loads each while it plans, before any
cell), and every dataset when :func:`robustbnn.data.load_dataset` returns it; each problem
is one ``DataError`` naming the set and the way out.

The rules, in order: a ``torch.Tensor``; a floating dtype (float64, float16 and bfloat16 are
converted to float32, the models' dtype; an integer or bool dtype is refused, as 8-bit values
have no scale the loader did not choose); four dimensions (N, C, H, W); at least one image;
every pixel finite; every pixel within the range of the preprocessing (:func:`pixel_range`).

Example:
    >>> import torch
    >>> check_ood_images(torch.zeros(2, 1, 28, 28, dtype=torch.float64), "x").dtype
    torch.float32
    >>> check_ood_images(torch.full((2, 1, 28, 28), 2.0), "x")
    Traceback (most recent call last):
    ...
    robustbnn.errors.DataError: OOD set 'x' has pixels in [2, 2], outside [0, 1], the range of \
'unit' preprocessing: scale them to [0, 1] in its loader, or drop it from --ood
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from robustbnn.data.types import DataBundle
from robustbnn.errors import DataError

__all__ = ["UNIT", "check_bundle", "check_channels", "check_ood_images", "pixel_range"]

UNIT = (0.0, 1.0)  # the models' pixel space, and every set's range under "unit"
DROP = "or drop it from --ood"


def pixel_range(preprocessing: str, reference: tuple[float, float] | None
                ) -> tuple[float, float]:
    """The pixel range a set declares under ``preprocessing``: [0, 1] under ``"unit"``; its
    ``reference`` range under ``"bhn_reference"`` (None: any finite value, as unclipped
    Gaussian noise)."""
    if preprocessing == "unit":
        return UNIT
    return reference if reference is not None else (-math.inf, math.inf)


def _hint(lo: float, hi: float, low: float, high: float, *, ood: bool) -> str:
    """The likely fix for pixels in [lo, hi] where [low, high] was declared."""
    if (low, high) == UNIT and lo >= 0 and 16 < hi <= 255:  # far above 1: an 8-bit scale
        return "divide by 255 in its loader (8-bit values)"
    if (low, high) == UNIT and -0.5 <= lo < 0 and hi <= 0.5:
        return "add 0.5 in its loader" + (
            " (a centred scale belongs to 'bhn_reference' alone, declared with "
            "OODSpec(reference_range=(-0.5, 0.5)))" if ood else "")
    return f"scale them to [{low:g}, {high:g}] in its loader"


def check_ood_images(x: object, name: str, *, preprocessing: str = "unit",
                     reference: tuple[float, float] | None = UNIT) -> Tensor:
    """An OOD set's images as a loader returned them, checked (see the module).

    Args:
        x: What the set's ``load`` returned.
        name: The set's name, for the messages.
        preprocessing: The preprocessing it was loaded with.
        reference: The range it declares for ``"bhn_reference"``
            (:attr:`robustbnn.data.ood_sets.OODSpec.reference_range`).

    Returns:
        ``x`` itself, or as float32 when it was another floating dtype.

    Raises:
        DataError: Naming the set, what is wrong and the way out.
    """
    where = f"OOD set {name!r}"
    if not isinstance(x, Tensor):
        raise DataError(f"{where} returned a {type(x).__module__}.{type(x).__qualname__}, not "
                        "a torch.Tensor; an OOD set's load returns float32 images of shape "
                        f"(N, C, H, W): return torch.as_tensor(...) from its loader, {DROP}")
    if not x.is_floating_point():
        raise DataError(f"{where} returned {x.dtype} images; an OOD set's load returns float "
                        "images, in [0, 1] under 'unit' preprocessing: convert them in its "
                        f"loader (x.float() / 255 for 8-bit values), {DROP}")
    x = x.float()
    if x.ndim != 4:
        side = math.isqrt(x.shape[-1]) if x.ndim == 2 else 0
        flat = (f" (x.view(-1, 1, {side}, {side}) for flattened {side}x{side} images)"
                if side and side * side == x.shape[-1] else "")
        raise DataError(f"{where} returned images of shape {tuple(x.shape)}; an OOD set's load "
                        f"returns (N, C, H, W) images: reshape them in its loader{flat}, {DROP}")
    if len(x) == 0:
        raise DataError(f"{where} returned no images (shape {tuple(x.shape)}); a set needs at "
                        f"least one image to be scored: check its files and its loader, {DROP}")
    _check_pixels(x, where, "", pixel_range(preprocessing, reference),
                  f"the range of {preprocessing!r} preprocessing", DROP, ood=True)
    return x


def check_channels(x: Tensor, name: str, channels: int, dataset: str) -> None:
    """Raise ``DataError`` unless the OOD images ``x`` (N, C, H, W) have the dataset's
    ``channels``, naming the set, both counts and the way out."""
    if x.shape[1] != channels:
        raise DataError(f"OOD set {name!r} has {x.shape[1]}-channel images and the dataset "
                        f"{dataset!r} {channels}-channel ones: convert them in its loader "
                        f"(x.mean(1, keepdim=True) for grayscale), {DROP}")


def _check_pixels(x: Tensor, where: str, split: str, declared: tuple[float, float],
                  what: str, way_out: str, *, ood: bool) -> None:
    """Raise ``DataError`` unless every pixel of ``x`` is finite and within ``declared``;
    ``split`` ("test ") says which images of a dataset."""
    bad = int((~torch.isfinite(x)).sum())
    if bad:
        pixels = "pixel" if bad == 1 else "pixels"
        broken = "the set is broken" if ood else "the data is broken"
        raise DataError(f"{where} has {bad} non-finite {split}{pixels} (NaN or inf) in its "
                        f"{len(x)} {split}images; {broken}, not the models: fix its loader or "
                        f"its files, {way_out}")
    lo, hi = (float(v) for v in torch.aminmax(x))
    low, high = declared
    if lo < low or hi > high:
        raise DataError(f"{where} has {split}pixels in [{lo:.3g}, {hi:.3g}], outside [{low:g}, "
                        f"{high:g}], {what}: {_hint(lo, hi, low, high, ood=ood)}, {way_out}")


def check_bundle(data: object, name: str) -> None:
    """A dataset's splits as a loader returned them, checked: non-empty train and test, the
    images finite and in [0, 1] (the models' pixel space), the labels in [0, C).

    Args:
        data: What the dataset's ``load`` returned (a :class:`~robustbnn.data.DataBundle`).
        name: The dataset's name, for the messages.

    Raises:
        DataError: Naming the dataset, the split, what is wrong and the way out.
    """
    where = f"dataset {name!r}"
    way_out = "or train on another --dataset"
    if not isinstance(data, DataBundle):
        raise DataError(f"{where} returned a {type(data).__qualname__}, not a DataBundle: "
                        f"return robustbnn.data.DataBundle(...) from its loader, {way_out}")
    for split in ("train", "val", "test"):
        x, y = getattr(data, split).x, getattr(data, split).y
        if len(x) == 0:
            if split == "val":
                continue
            raise DataError(f"{where} has no {split} images: check its files and its loader, "
                            f"{way_out}")
        _check_pixels(x, where, f"{split} ", UNIT, "the models' pixel space", way_out, ood=False)
        if int(y.min()) < 0 or int(y.max()) >= data.num_classes:
            raise DataError(f"{where} has {split} labels in [{int(y.min())}, {int(y.max())}], "
                            f"outside [0, {data.num_classes - 1}] for its {data.num_classes} "
                            f"classes: number them 0 to C - 1 in its loader, {way_out}")
