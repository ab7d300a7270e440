"""MLE and dropout-trained MLP baselines (deterministic at test time).

References:
    Srivastava et al., "Dropout: A Simple Way to Prevent Neural Networks from Overfitting",
    JMLR 2014. Used as the "MLE" and "dropout" rows of Krueger et al. 2017 (BHN, Table 1)
    and Blundell et al. 2015 (Table 1).
"""

from __future__ import annotations

import dataclasses

import torch
import torch.nn.functional as F
from torch import Tensor

from robustbnn.config import TrainConfig
from robustbnn.models._dropout import dropout
from robustbnn.models.base import MODELS, BayesianModule, ModelSpec
from robustbnn.models.nets import activation, flat_features, linear_stack


@dataclasses.dataclass(frozen=True)
class MLPConfig(TrainConfig):
    """A ReLU MLP trained by maximum likelihood with Adam."""

    hidden: tuple[int, ...] = (400, 400)  # BbB Table 1 smallest net; BHN uses 800/1200
    activation: str = "relu"  # lasagne DenseLayer default [CODE BHN]; "gelu" for BHN Table 2


class DropoutMLP(BayesianModule):
    """An MLP with optional dropout after each hidden layer (and on the input).

    ``mc=True`` keeps dropout on at test time with its own masks (MC dropout); ``mc=False``
    trains with dropout and predicts with the deterministic, weight-scaled network.
    """

    def __init__(
        self,
        input_shape: tuple[int, ...],
        num_classes: int,
        hidden: tuple[int, ...],
        act: str,
        *,
        p: float = 0.0,
        input_p: float = 0.0,
        mc: bool = False,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.p, self.input_p, self.mc = p, input_p, mc
        self.act = activation(act)
        self.layers = linear_stack([flat_features(input_shape), *hidden, num_classes], generator)

    def _forward(self, x: Tensor, n_samples: int, generator: torch.Generator | None,
                 stochastic: bool) -> Tensor:
        h = x.flatten(1)  # (B, D)
        if stochastic and self.input_p > 0:
            h = dropout(h.expand(n_samples, *h.shape), self.input_p, generator)  # (S, B, D)
        last = len(self.layers) - 1
        for i, layer in enumerate(self.layers):
            # Without input dropout the first layer is exact to share across samples.
            h = layer(h)
            if i < last:
                h = self.act(h)
                if stochastic and self.p > 0:
                    if h.dim() == 2:
                        h = h.expand(n_samples, *h.shape)  # (S, B, H)
                    h = dropout(h, self.p, generator)
        if h.dim() == 2:
            h = h.expand(n_samples, *h.shape)
        return h  # (S, B, C)

    def sample_logits(
        self, x: Tensor, n_samples: int, *, generator: torch.Generator | None = None
    ) -> Tensor:
        """Logits, shape (S, B, C); identical slices unless ``mc``."""
        return self._forward(x, n_samples, generator, stochastic=self.mc)

    def loss(
        self,
        x: Tensor,
        y: Tensor,
        *,
        n_train: int,
        generator: torch.Generator | None = None,
        batch: tuple[int, int] = (0, 1),
    ) -> Tensor:
        """Cross-entropy of one dropout sample (plain NLL when there is no dropout)."""
        logits = self._forward(x, 1, generator, stochastic=True)[0]  # (B, C)
        return F.cross_entropy(logits, y)


def build_mlp(cfg: MLPConfig, input_shape: tuple[int, ...], num_classes: int,
              generator: torch.Generator | None) -> DropoutMLP:
    """Build the MLE MLP."""
    return DropoutMLP(input_shape, num_classes, cfg.hidden, cfg.activation, generator=generator)


MODELS.register(
    "mlp",
    ModelSpec(
        build=build_mlp,
        config=MLPConfig,
        description="MLE MLP (Adam), deterministic",
        reference="Krueger et al. 2017 (BHN), MLE baseline",
        stochastic=False,
    ),
)
