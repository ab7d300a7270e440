"""Layers and kernels that MNIST-C corruptions add or convolve: lines, zigzags, fog, motion.

These are the parts of the reference ``corruptions.py`` (google-research/mnist-c) that no
image library provides: the antialiased line of ``line_from_points``, the zigzag path, the
diamond-square plasma of ``fog`` and ImageMagick's motion-blur kernel. Each follows the
published definition, quirks included (noted where they occur), so that images look like the
released MNIST-C; randomness comes only from the ``numpy.random.Generator`` passed in.
"""

from __future__ import annotations

import math

import numpy as np

SIZE = 28  # MNIST side; the reference hard-codes it in every layer


def line_from_points(c0: float, r0: float, c1: float, r1: float) -> np.ndarray:
    """Antialiased line from (column c0, row r0) to (c1, r1) on a 28×28 grid, values in [0, 1].

    A pixel's value is log(1 - d / 2.3) + 1 clipped to [0, 1], where d is its *vertical*
    distance to the line (as in the reference, not the perpendicular one); columns left of
    floor(c0) and from ceil(c1) on are zero. A vertical segment (c0 == c1) draws nothing,
    as in the reference.
    """
    if c1 == c0:
        return np.zeros((SIZE, SIZE))
    rows = np.arange(SIZE, dtype=np.float64)[:, None]
    cols = np.arange(SIZE, dtype=np.float64)[None, :]
    slope = (r1 - r0) / (c1 - c0)
    dist = np.clip(np.abs(rows - (slope * (cols - c0) + r0)), 0.0, 2.3 - 1e-10)
    layer = np.clip(np.log(1.0 - dist / 2.3) + 1.0, 0.0, 1.0)
    layer[:, : max(math.floor(c0), 0)] = 0.0
    layer[:, max(math.ceil(c1), 0):] = 0.0
    return layer


def zigzag_vertices(r0: float, r1: float, *, c0: float = 2.0, c1: float = 25.0,
                    length: float = 2.0, width: float = 2.0) -> np.ndarray:
    """Vertices (2, K) as (columns, rows) of the MNIST-C zigzag from (c0, r0) towards (c1, r1).

    The path is built along the x axis (teeth every ``length`` columns, ``width`` rows above
    and below), then rotated onto the line. The last vertex keeps the reference's formula,
    (d, r_last / (2 (d - max_c))), a quirk that bends the final tooth towards the line.
    """
    theta = math.atan((r1 - r0) / (c1 - c0))
    d = (c1 - c0) / math.cos(theta)  # length of the straight line
    points = [(0.0, 0.0)]
    r_last = 0.0
    for i in range(int((d - length) // (2 * length)) + 1):
        r_last = (-1) ** i * width
        points.append(((2 * i + 1) * length, r_last))
    max_c = 2 * length * (d // (2 * length))
    if d != max_c:
        points.append((d, r_last / (2 * (d - max_c))))
    turn = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
    vertices = turn @ np.array(points).T  # (2, K)
    return vertices + np.array([[c0], [r0]])


def plasma_fractal(rng: np.random.Generator, *, size: int = 256,
                   decay: float = 3.0) -> np.ndarray:
    """Diamond-square height map (size, size) in [0, 1] on a torus, as ImageNet-C's fog.

    Each new point is the mean of its four neighbours plus w · U(-w, w): the reference scales
    the uniform draw by w twice (noise of scale w²), with w = 100 at the coarsest level,
    divided by ``decay`` at each finer one. ``size`` must be a power of two.
    """
    if size < 2 or size & (size - 1):
        raise ValueError(f"size must be a power of two, got {size}")
    grid = np.zeros((size, size))
    step, wibble = size, 100.0

    def jitter(total: np.ndarray) -> np.ndarray:
        return total / 4 + wibble * rng.uniform(-wibble, wibble, total.shape)

    while step >= 2:
        half = step // 2
        corners = grid[0::step, 0::step]
        # Square step: each square's centre from its four corners.
        square = corners + np.roll(corners, -1, axis=0)
        square = square + np.roll(square, -1, axis=1)
        grid[half::step, half::step] = jitter(square)
        # Diamond step: edge midpoints from the two corners and two centres beside them.
        centres = grid[half::step, half::step]
        grid[0::step, half::step] = jitter(centres + np.roll(centres, 1, axis=0)
                                           + corners + np.roll(corners, -1, axis=1))
        grid[half::step, 0::step] = jitter(centres + np.roll(centres, 1, axis=1)
                                           + corners + np.roll(corners, -1, axis=0))
        step = half
        wibble /= decay
    grid -= grid.min()
    return grid / grid.max()


def motion_kernel(radius: float, sigma: float, angle: float) -> np.ndarray:
    """ImageMagick's ``MotionBlurImage`` kernel as a dense, centred correlation kernel.

    ImageMagick (``effect.c``) averages W = 2⌈radius⌉ + 1 pixels along a ray from each pixel,
    one-sided: tap i = 0..W-1 has weight exp(-i² / 2σ²) (normalised to sum 1) and reads the
    pixel at column offset ⌈i cos a - ½⌉ and row offset ⌈i sin a - ½⌉ (angle a in degrees,
    rows pointing down). Correlating with this kernel, edge pixels repeated (ImageMagick's
    default virtual pixels), gives the same sum.
    """
    width = 2 * math.ceil(radius) + 1
    taps = np.arange(width, dtype=np.float64)
    weights = np.exp(-(taps**2) / (2.0 * sigma**2))
    weights /= weights.sum()
    rad = math.radians(angle)
    dcol = np.ceil(taps * math.cos(rad) - 0.5).astype(int)
    drow = np.ceil(taps * math.sin(rad) - 0.5).astype(int)
    # Odd and centred, as small as the offsets allow (correlation cost grows with its area).
    half_r, half_c = int(np.abs(drow).max()), int(np.abs(dcol).max())
    kernel = np.zeros((2 * half_r + 1, 2 * half_c + 1))
    np.add.at(kernel, (half_r + drow, half_c + dcol), weights)
    return kernel
