"""The ``OOD_DATASETS`` registry: out-of-distribution image sets for MNIST-trained models.

Every set loads through one signature,
``load(data_root, n, *, seed, preprocessing, download) -> Tensor``, and returns float32
images of shape (N, 1, 28, 28). ``n <= 0`` means all of a file-based set, and 10,000 images
of a generated one (the count of docs/protocols.md §1.5).

Order. File-based sets return their first ``n`` images in a fixed order that ``seed`` does
not change (stated per loader: file order for notMNIST IDX, Fashion-MNIST, KMNIST and CIFAR;
letters interleaved for the notMNIST archive; sorted path for Omniglot). Generated sets
(``uniform``, ``gaussian``, ``glyphs``) draw image i from ``numpy.random.default_rng([seed,
i])``, so the first ``n`` images of a larger request are the same images.

Preprocessing (:data:`PREPROCESSINGS`):

- ``"unit"``: [0, 1], the model's pixel space (Gaussian noise clipped to it).
- ``"bhn_reference"``: what the Bayesian Hypernetworks reference code fed, where it differs:
  notMNIST (and ``glyphs``, its stand-in) in [-0.5, 0.5] and Gaussian noise unclipped. For
  Omniglot it equals ``"unit"``, because docs/protocols.md §1.5 measured that the published
  numbers need the [0, 1] scale; for uniform noise and CIFARbw the reference used [0, 1]; the
  reference did not use Fashion-MNIST or KMNIST.

Example:
    >>> from robustbnn.data.ood_sets import OOD_DATASETS, load_ood
    >>> load_ood("uniform", 3, seed=0).shape
    torch.Size([3, 1, 28, 28])
    >>> OOD_DATASETS.get("glyphs").embedded
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from torch import Tensor

from robustbnn.data._ood import PREPROCESSINGS, check_preprocessing, generated_count
from robustbnn.data.checks import check_ood_images
from robustbnn.data.cifar10bw import CIFAR10BW
from robustbnn.data.fashion_mnist import FASHION_MNIST
from robustbnn.data.folder import load_folder, parse_folder
from robustbnn.data.glyphs import glyphs_available, load_glyphs
from robustbnn.data.kmnist import KMNIST
from robustbnn.data.noise import gaussian_noise, uniform_noise
from robustbnn.data.notmnist import NOTMNIST
from robustbnn.data.omniglot import OMNIGLOT
from robustbnn.data.registry import SourceSpec
from robustbnn.registry import Registry

__all__ = ["BUILTIN_OOD_SETS", "OOD_DATASETS", "PREPROCESSINGS", "OODSpec", "check_ood_name",
           "load_ood"]


@dataclass(frozen=True)
class OODSpec(SourceSpec):
    """How to get one OOD image set: the fields of :class:`SourceSpec`, with ``load`` being
    ``load(data_root, n, *, seed, preprocessing, download) -> Tensor`` of shape (N, 1, 28, 28),
    float32, which raises ``ConfigError`` for an unknown preprocessing.

    Args:
        reference_range: The pixel range ``load`` returns under ``"bhn_reference"`` (None: any
            finite value, as unclipped Gaussian noise); under ``"unit"`` every set is in
            [0, 1]. :func:`load_ood` refuses images outside the range of the preprocessing
            they were loaded with (:func:`robustbnn.data.checks.check_ood_images`).
    """

    reference_range: tuple[float, float] | None = (0.0, 1.0)


OOD_DATASETS: Registry[OODSpec] = Registry("OOD set")
CENTRED = (-0.5, 0.5)  # notMNIST's scale under "bhn_reference" (and glyphs', its stand-in)


def _always(data_root: Path | None = None) -> bool:
    """Embedded sets are always available."""
    return True


def load_uniform(data_root: Path | None = None, n: int = 0, *, seed: int = 0,
                 preprocessing: str = "unit", download: bool = False) -> Tensor:
    """U[0, 1) noise per pixel (both preprocessings); see :func:`noise.uniform_noise`."""
    check_preprocessing(preprocessing)
    return uniform_noise(generated_count(n), seed=seed)


def load_gaussian(data_root: Path | None = None, n: int = 0, *, seed: int = 0,
                  preprocessing: str = "unit", download: bool = False) -> Tensor:
    """N(0, 1) noise per pixel, clipped to [0, 1] for ``"unit"``, unclipped for the reference."""
    check_preprocessing(preprocessing)
    return gaussian_noise(generated_count(n), seed=seed, clip=preprocessing == "unit")


for _spec in (
    OODSpec("uniform", "uniform noise U[0,1) per pixel, generated per index",
            load_uniform, _always, embedded=True),
    OODSpec("gaussian", "Gaussian noise N(0,1) per pixel (clipped to [0,1] unless "
            "bhn_reference), generated per index", load_gaussian, _always, embedded=True,
            reference_range=None),
    OODSpec("notmnist", "notMNIST letters A-J (10k IDX sample, else notMNIST_small.tar.gz)",
            NOTMNIST.load, NOTMNIST.available, reference_range=CENTRED),
    OODSpec("omniglot", "Omniglot characters of the 15 digit-free background alphabets, "
            "inverted, 28x28", OMNIGLOT.load, OMNIGLOT.available),
    OODSpec("cifar10bw", "CIFAR-10 in grayscale at 28x28 (test batch, else the 4k train "
            "sprites)", CIFAR10BW.load, CIFAR10BW.available),
    OODSpec("glyphs", "generated letters A-J in matplotlib's fonts, not notMNIST",
            load_glyphs, glyphs_available, embedded=True, reference_range=CENTRED),
    OODSpec("fashion_mnist", "Fashion-MNIST test images", FASHION_MNIST.load,
            FASHION_MNIST.available),
    OODSpec("kmnist", "Kuzushiji-MNIST test images", KMNIST.load, KMNIST.available),
):
    OOD_DATASETS.register(_spec.name, _spec)

# The sets robustbnn ships; adversarial-OOD cells score these when ``adv_ood_sets`` names them,
# and every other set of the run (plug-in and ``folder:PATH`` sets) always.
BUILTIN_OOD_SETS: tuple[str, ...] = tuple(OOD_DATASETS.names())


def check_ood_name(name: str) -> None:
    """Raise unless ``name`` is a registered set or a ``folder:PATH`` name.

    Raises:
        UnknownNameError: If ``name`` is neither.
    """
    if parse_folder(name) is None:
        OOD_DATASETS.get(name)


def load_ood(
    name: str,
    n: int = 0,
    data_root: str | Path | None = None,
    *,
    seed: int = 0,
    preprocessing: str = "unit",
    download: bool = False,
) -> Tensor:
    """Load a registered OOD set.

    Args:
        name: A name from ``OOD_DATASETS.names()``, or ``folder:PATH`` for the images of a
            folder (:mod:`robustbnn.data.folder`; ``seed`` and ``data_root`` do not apply).
        n: Number of images: the first ``n`` in the set's fixed order; all of a file-based
            set (10,000 of a generated one) when ``n <= 0``.
        data_root: The ``--data-root`` value; None falls back to ``$ROBUSTBNN_DATA``, then to
            the user cache folder (see :func:`resolve_data_root`). Ignored for embedded sets.
        seed: Seed of generated sets (image i comes from ``default_rng([seed, i])``); file
            sets ignore it.
        preprocessing: One of :data:`PREPROCESSINGS`.
        download: Allow downloading missing files (needs network).

    Returns:
        float32 tensor of shape (N, 1, 28, 28) (float64, float16 and bfloat16 images of a
        plug-in converted to float32).

    Raises:
        UnknownNameError: If ``name`` is not registered; lists the known names.
        ConfigError: If ``preprocessing`` is unknown.
        DataError: If files are missing, corrupt, or the data root is wrong; or if the images
            are not a tensor of (N, C, H, W) float images, none, with a non-finite pixel, or
            outside the range of ``preprocessing`` (:func:`~robustbnn.data.checks.
            check_ood_images`), naming the set and the way out.
    """
    if (folder := parse_folder(name)) is not None:
        check_preprocessing(preprocessing)
        return check_ood_images(load_folder(folder, n), name)
    spec = OOD_DATASETS.get(name)
    check_preprocessing(preprocessing)
    x = spec.load(spec.root(data_root), n, seed=seed, preprocessing=preprocessing,
                  download=download)
    return check_ood_images(x, name, preprocessing=preprocessing,
                            reference=spec.reference_range)
