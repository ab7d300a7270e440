"""A model plug-in whose logits are NaN for bright images (issue 49's numerical faults).

``bright_nan`` is a linear classifier that returns NaN logits for every image whose mean pixel
exceeds 0.4, as an overflow on bright inputs would: MNIST digits (mean about 0.13) and clipped
Gaussian noise (about 0.34) are scored, uniform noise (0.5) and the glyphs are not.
"""

import dataclasses

import torch

from robustbnn.config import TrainConfig
from robustbnn.models import MODELS, BayesianModule, ModelSpec

BRIGHTNESS = 0.4


@dataclasses.dataclass(frozen=True)
class BrightConfig(TrainConfig):
    epochs: int = 2


class NaNWhenBright(BayesianModule):
    """A linear classifier with NaN logits for images brighter than :data:`BRIGHTNESS`."""

    def __init__(self, cfg, input_shape, num_classes, generator):
        super().__init__()
        self.num_classes = num_classes
        self.w = torch.nn.Parameter(torch.zeros(torch.Size(input_shape).numel(), num_classes))

    def sample_logits(self, x, n_samples, *, generator=None):
        flat = x.flatten(1)
        bright = flat.mean(1, keepdim=True) > BRIGHTNESS  # (B, 1)
        logits = flat @ self.w
        logits = torch.where(bright, torch.full_like(logits, float("nan")), logits)
        return logits.expand(n_samples, -1, -1)  # (S, B, C)


MODELS.register("bright_nan", ModelSpec(NaNWhenBright, BrightConfig, "NaN when bright", "test",
                                        stochastic=False, shrink={"smoke": {"epochs": 2}}))
