"""An outside model plug-in, exactly as the README shows it (registered as ``toy_ensemble``)."""

from __future__ import annotations

import dataclasses

import torch
from torch import nn

from robustbnn.config import TrainConfig
from robustbnn.models import MODELS, BayesianModule, ModelSpec


@dataclasses.dataclass(frozen=True)
class ToyConfig(TrainConfig):
    members: int = 3  # ensemble size


class ToyEnsemble(BayesianModule):
    """A uniform mixture of linear classifiers: sample s uses member s mod M."""

    def __init__(self, cfg: ToyConfig, input_shape, num_classes, generator) -> None:
        super().__init__()
        self.num_classes = num_classes
        d = torch.Size(input_shape).numel()
        self.w = nn.Parameter(0.01 * torch.randn(cfg.members, d, num_classes, generator=generator))

    def sample_logits(self, x, n_samples, *, generator=None):
        idx = torch.randint(len(self.w), (n_samples,), generator=generator, device=x.device)
        return torch.einsum("bd,sdc->sbc", x.flatten(1), self.w[idx])  # (S, B, C)


MODELS.register("toy_ensemble", ModelSpec(build=ToyEnsemble, config=ToyConfig,
                                          description="toy ensemble (plug-in example)",
                                          reference="README plug-in example"))
