"""A plug-in model whose training always raises (the grid's failing-cell test)."""

import dataclasses

import torch

from robustbnn.config import TrainConfig
from robustbnn.models import MODELS, BayesianModule, ModelSpec


@dataclasses.dataclass(frozen=True)
class FailingConfig(TrainConfig):
    pass


class Failing(BayesianModule):
    """A linear classifier whose loss raises, as a buggy plug-in would."""

    def __init__(self, cfg, input_shape, num_classes, generator):
        super().__init__()
        self.num_classes = num_classes
        self.w = torch.nn.Parameter(torch.zeros(torch.Size(input_shape).numel(), num_classes))

    def sample_logits(self, x, n_samples, *, generator=None):
        return (x.flatten(1) @ self.w).expand(n_samples, -1, -1)

    def loss(self, x, y, *, n_train, generator=None, batch=(0, 1)):
        raise RuntimeError("plug-in bug: loss not implemented")


MODELS.register("failing_model", ModelSpec(Failing, FailingConfig, "always fails", "test"))
