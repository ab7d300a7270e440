"""An outside model plug-in, exactly as docs/models.md shows it (registered: ``toy_ensemble``)."""

import dataclasses

import torch

from robustbnn.config import TrainConfig
from robustbnn.models import MODELS, BayesianModule, ModelSpec


@dataclasses.dataclass(frozen=True)
class ToyConfig(TrainConfig):
    members: int = 3  # ensemble size


class ToyEnsemble(BayesianModule):
    """A uniform mixture of linear classifiers: each sample picks one member."""

    def __init__(self, cfg, input_shape, num_classes, generator):
        super().__init__()
        self.num_classes, d = num_classes, torch.Size(input_shape).numel()
        w = 0.01 * torch.randn(cfg.members, d, num_classes, generator=generator)
        self.w = torch.nn.Parameter(w)

    def sample_logits(self, x, n_samples, *, generator=None):
        pick = torch.randint(len(self.w), (n_samples,), generator=generator, device=x.device)
        return torch.einsum("bd,sdc->sbc", x.flatten(1), self.w[pick])  # (S, B, C)


MODELS.register("toy_ensemble", ModelSpec(ToyEnsemble, ToyConfig, "toy ensemble", "README",
                                          shrink={"smoke": {"epochs": 10}}))
