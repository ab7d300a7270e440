"""A test plug-in whose registered name carries markup, to prove the reports escape names."""

from __future__ import annotations

import dataclasses

import torch

from robustbnn.config import TrainConfig
from robustbnn.models import MODELS, BayesianModule, ModelSpec

NAME = "evil<script>alert('x')</script>"  # no "/" in the name: it also names files


@dataclasses.dataclass(frozen=True)
class LinearConfig(TrainConfig):
    """A linear softmax classifier (deterministic: every sample is the same)."""


class Linear(BayesianModule):
    """x -> W x + b; samples are identical copies."""

    def __init__(self, cfg: LinearConfig, input_shape: tuple[int, ...], num_classes: int,
                 generator: torch.Generator | None) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.linear = torch.nn.Linear(torch.Size(input_shape).numel(), num_classes)

    def sample_logits(self, x: torch.Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> torch.Tensor:
        return self.linear(x.flatten(1)).expand(n_samples, -1, -1)  # (S, B, C)


MODELS.register(NAME, ModelSpec(Linear, LinearConfig, "linear, markup in its name", "tests",
                                 stochastic=False))
