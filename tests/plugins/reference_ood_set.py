"""An OOD-set plug-in that declares a centred scale for ``bhn_reference`` (issue 49).

``ood_reference`` is uniform noise in [0, 1] under ``unit`` and in [-0.5, 0.5] under
``bhn_reference``, as notMNIST is, and says so with ``reference_range``.
"""

from pathlib import Path

from robustbnn.data.noise import uniform_noise
from robustbnn.data.ood_sets import OOD_DATASETS, OODSpec


def load_reference(data_root: Path | None = None, n: int = 0, *, seed: int = 0,
                   preprocessing: str = "unit", download: bool = False):
    x = uniform_noise(n if n > 0 else 100, seed=seed)
    return x - 0.5 if preprocessing == "bhn_reference" else x


OOD_DATASETS.register("ood_reference", OODSpec(
    "ood_reference", "uniform noise, centred under bhn_reference", load_reference,
    lambda data_root=None: True, embedded=True, reference_range=(-0.5, 0.5)))
