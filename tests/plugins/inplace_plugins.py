"""Plug-ins that change the inputs they are given in place (issue 49, item 1).

Two attacks zero their input ``x`` (one returns it, one a copy of it), and a model scales its
input ``x`` in place (through ``x.data``, as a naive preprocessing step would, so autograd does
not refuse it first). None of them is imported by the package or the tests: load this module
with ``--plugin``.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import Tensor

from robustbnn.attacks import ATTACKS
from robustbnn.attacks.base import Attack
from robustbnn.config import TrainConfig
from robustbnn.models import MODELS, BayesianModule, ModelSpec


@dataclasses.dataclass(frozen=True)
class InPlace(Attack):
    """Zeroes its input in place and returns it."""

    eps: float = 0.1
    n_samples: int = 1

    def __call__(self, model, x, y, *, generator=None):  # noqa: ANN001, ANN204, D102
        x.mul_(0)
        return x


@dataclasses.dataclass(frozen=True)
class InPlaceClone(Attack):
    """Zeroes its input in place and returns a copy of it."""

    eps: float = 0.1
    n_samples: int = 1

    def __call__(self, model, x, y, *, generator=None):  # noqa: ANN001, ANN204, D102
        x.mul_(0)
        return x.clone()


@dataclasses.dataclass(frozen=True)
class ScalesInputConfig(TrainConfig):
    """A linear classifier with Gaussian weight noise."""


class ScalesInput(BayesianModule):
    """Logits x W_s with W_s = W + 0.1 ε_s, after halving x in place."""

    def __init__(self, cfg: ScalesInputConfig, input_shape: tuple[int, ...], num_classes: int,
                 generator: torch.Generator | None) -> None:
        super().__init__()
        self.num_classes = num_classes
        d = torch.Size(input_shape).numel()
        self.w = torch.nn.Parameter(0.1 * torch.randn(d, num_classes, generator=generator))

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        """Logits (S, B, C); halves ``x`` in place first."""
        x.data.mul_(0.5)
        eps = torch.randn((n_samples, *self.w.shape), generator=generator, device=x.device)
        return torch.einsum("bd,sdc->sbc", x.flatten(1), self.w + 0.1 * eps)  # (S, B, C)


ATTACKS.register("inplace", InPlace)
ATTACKS.register("inplace_clone", InPlaceClone)
MODELS.register("bad_mutates_input", ModelSpec(ScalesInput, ScalesInputConfig,
                                               "halves its input in place", "tests",
                                               shrink={"smoke": {"epochs": 1}}))
