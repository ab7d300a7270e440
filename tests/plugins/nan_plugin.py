"""Plug-in models that break the contract: NaN logits at evaluation, and the wrong axis order.

``nan_model`` trains, then its ``after_fit`` poisons a buffer, so every evaluation cell meets
NaN logits: for images with a black pixel, as a ``log(x)`` bug would give, so the model
contract's random inputs (none exactly 0) pass and the bench's digits do not.
``swapped_model`` returns (B, S, C) instead of (S, B, C).
"""

import dataclasses

import torch

from robustbnn.config import TrainConfig
from robustbnn.models import MODELS, BayesianModule, ModelSpec


@dataclasses.dataclass(frozen=True)
class LinearConfig(TrainConfig):
    epochs: int = 2


class NaNAtEvaluation(BayesianModule):
    """A linear classifier whose logits are NaN after training."""

    def __init__(self, cfg, input_shape, num_classes, generator):
        super().__init__()
        self.num_classes = num_classes
        self.w = torch.nn.Parameter(torch.zeros(torch.Size(input_shape).numel(), num_classes))
        self.register_buffer("poison", torch.zeros(()))

    def sample_logits(self, x, n_samples, *, generator=None):
        black = (x.flatten(1) == 0).any(1, keepdim=True)  # (B, 1)
        bad = torch.where(black, self.poison, torch.zeros_like(self.poison))
        return (x.flatten(1) @ self.w + bad).expand(n_samples, -1, -1)

    def after_fit(self, train, val, *, generator=None):
        self.poison.fill_(float("nan"))


class SwappedAxes(NaNAtEvaluation):
    """Samples last: (B, S, C)."""

    def sample_logits(self, x, n_samples, *, generator=None):
        return (x.flatten(1) @ self.w).unsqueeze(1).expand(-1, n_samples, -1)


MODELS.register("nan_model", ModelSpec(NaNAtEvaluation, LinearConfig, "NaN at evaluation",
                                       "test", stochastic=False))
MODELS.register("swapped_model", ModelSpec(SwappedAxes, LinearConfig, "samples last", "test",
                                           stochastic=False))
