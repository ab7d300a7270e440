"""Attack plug-ins that break their budget, each refused by name by the harness."""

import dataclasses

import torch

from robustbnn.attacks import ATTACKS
from robustbnn.attacks.base import Attack


@dataclasses.dataclass(frozen=True)
class Blank(Attack):
    """Returns blank images: far outside any small eps-ball."""

    eps: float = 0.1
    n_samples: int = 1

    def __call__(self, model, x, y, *, generator=None):
        return torch.zeros_like(x)


@dataclasses.dataclass(frozen=True)
class Greedy(Attack):
    """Steps twice its eps: inside [0, 1] but outside its L-infinity ball."""

    eps: float = 0.1
    n_samples: int = 1

    def __call__(self, model, x, y, *, generator=None):
        return (x + 2 * self.eps * torch.where(x < 0.5, 1.0, -1.0)).clamp(0, 1)


ATTACKS.register("blank_attack", Blank)
ATTACKS.register("greedy_attack", Greedy)
