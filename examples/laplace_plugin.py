"""A laplace-torch plug-in, registered as ``lt_lastlayer_diag``: the ``after_fit`` hook.

    robustbnn bench --plugin examples.laplace_plugin --models lt_lastlayer_diag,laplace

A plain MLP trains by maximum likelihood. Once training is over, ``after_fit`` hands it to
laplace-torch for a diagonal last-layer Laplace approximation, tunes the prior precision by
grid search on the validation split (by the marginal likelihood when that split is empty), and
keeps the posterior standard deviations in a buffer registered at build time: the cache stores
it, and a cache hit, which runs no hook, samples the same posterior. (robustbnn's own
``laplace`` model is the Kronecker-factored one.)

References:
    Daxberger et al., "Laplace Redux -- Effortless Bayesian Deep Learning", NeurIPS 2021,
    arXiv:2106.14806.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from itertools import pairwise

import torch
from laplace import Laplace
from torch import Tensor, nn
from torch.utils.data import DataLoader, TensorDataset

from robustbnn.config import TrainConfig
from robustbnn.contract.rng import seeded_global
from robustbnn.data import Split
from robustbnn.models import MODELS, BayesianModule, ModelSpec


@dataclasses.dataclass(frozen=True)
class LastLayerDiagConfig(TrainConfig):
    """A ReLU MLP with a diagonal Laplace posterior over its last layer."""

    hidden: tuple[int, ...] = (400, 400)


class LastLayerDiagLaplace(BayesianModule):
    """A ReLU MLP; ``head_std`` holds the last layer's posterior standard deviations."""

    def __init__(self, cfg: LastLayerDiagConfig, input_shape: tuple[int, ...],
                 num_classes: int, generator: torch.Generator | None) -> None:
        super().__init__()
        self.num_classes = num_classes
        sizes = [math.prod(input_shape), *cfg.hidden]
        with seeded_global(generator):  # nn.Linear initialises with the global RNG
            self.body = nn.Sequential(nn.Flatten(), *(
                m for a, b in pairwise(sizes) for m in (nn.Linear(a, b), nn.ReLU())))
            self.head = nn.Linear(sizes[-1], num_classes)
        # Zero until after_fit (the MAP network while training validates); final shape now.
        self.register_buffer("head_std", torch.zeros(self.head.weight.numel() + num_classes))

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        """Logits of ``n_samples`` last-layer weight samples, shape (S, B, C)."""
        h = self.body(x)  # (B, H): the features, shared by every sample
        mean = torch.cat([self.head.weight.flatten(), self.head.bias])  # laplace-torch's order
        z = torch.randn(n_samples, mean.numel(), generator=generator, device=x.device,
                        dtype=x.dtype)
        weight, bias = (mean + z * self.head_std).split([self.head.weight.numel(),
                                                         self.num_classes], dim=1)
        weight = weight.view(n_samples, self.num_classes, -1)  # (S, C, H)
        return torch.einsum("bh,sch->sbc", h, weight) + bias.unsqueeze(1)

    def after_fit(self, train: Split, val: Split, *,
                  generator: torch.Generator | None = None) -> None:
        """Fit the posterior with laplace-torch and keep its standard deviations."""
        # laplace-torch copies the network for a last-layer fit: our modules stay as they are.
        la = Laplace(nn.Sequential(self.body, self.head), "classification",
                     subset_of_weights="last_layer", hessian_structure="diag")
        la.fit(DataLoader(TensorDataset(train.x, train.y), batch_size=256))
        with warnings.catch_warnings():  # that its own predictive defaults to probit
            warnings.filterwarnings("ignore", message="By default `link_approx`")
            if len(val):
                la.optimize_prior_precision(
                    method="gridsearch", grid_size=21,
                    val_loader=DataLoader(TensorDataset(val.x, val.y), batch_size=256))
            else:
                la.optimize_prior_precision(method="marglik")
        with torch.no_grad():
            self.head_std.copy_(la.posterior_variance.sqrt())


MODELS.register(
    "lt_lastlayer_diag",
    ModelSpec(
        build=LastLayerDiagLaplace,
        config=LastLayerDiagConfig,
        description="MLE MLP + diagonal last-layer Laplace via laplace-torch (plug-in example)",
        reference="Daxberger et al. 2021 (Laplace Redux), arXiv:2106.14806",
        stochastic=True,
        shrink={"smoke": {"hidden": (32,), "epochs": 10}},
    ),
)
