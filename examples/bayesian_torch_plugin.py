"""A bayesian-torch model as a robustbnn plug-in, registered as ``bt_mlp``.

    robustbnn bench --plugin examples.bayesian_torch_plugin --models bt_mlp,mlp

An MLP of bayesian-torch's ``LinearReparameterization`` layers (mean-field Gaussian weights,
Bayes by Backprop), trained on NLL + KL / N. bayesian-torch draws its weights with the global
RNG (``eps.normal_()``) and initialises them the same way, so every call into it runs inside
:func:`~robustbnn.contract.rng.seeded_global`: the same generator gives the same samples, the
caller's global RNG is untouched, and a cached rerun reproduces the trained run.

References:
    Krishnan, Esposito & Subedar, "Bayesian-Torch: Bayesian neural network layers for
    uncertainty estimation", 2022, https://github.com/IntelLabs/bayesian-torch.
    Blundell et al., "Weight Uncertainty in Neural Networks", ICML 2015, arXiv:1505.05424.
"""

from __future__ import annotations

import dataclasses
import math
from itertools import pairwise

import torch
import torch.nn.functional as F
from bayesian_torch.layers import LinearReparameterization
from torch import Tensor, nn

from robustbnn.config import TrainConfig
from robustbnn.contract.rng import seeded_global
from robustbnn.models import MODELS, BayesianModule, ModelSpec


@dataclasses.dataclass(frozen=True)
class BTConfig(TrainConfig):
    """A ReLU MLP of bayesian-torch layers."""

    hidden: tuple[int, ...] = (400, 400)
    prior_variance: float = 1.0  # bayesian-torch's N(0, 1) prior (its name; used as sigma)
    posterior_rho_init: float = -3.0  # initial sigma = softplus(-3) ≈ 0.05


class BayesianTorchMLP(BayesianModule):
    """An MLP whose every layer is a bayesian-torch ``LinearReparameterization``."""

    def __init__(self, cfg: BTConfig, input_shape: tuple[int, ...], num_classes: int,
                 generator: torch.Generator | None) -> None:
        super().__init__()
        self.num_classes = num_classes
        sizes = [math.prod(input_shape), *cfg.hidden, num_classes]
        with seeded_global(generator):  # bayesian-torch initialises with normal_()
            self.layers = nn.ModuleList(
                LinearReparameterization(a, b, prior_variance=cfg.prior_variance,
                                         posterior_rho_init=cfg.posterior_rho_init)
                for a, b in pairwise(sizes))

    def forward_once(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """One weight sample for the whole batch: logits (B, C) and the layers' KL."""
        h, kl = x.flatten(1), x.new_zeros(())
        for i, layer in enumerate(self.layers):
            h, layer_kl = layer(h)
            kl = kl + layer_kl
            if i < len(self.layers) - 1:
                h = F.relu(h)
        return h, kl

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        """Logits of ``n_samples`` weight samples, shape (S, B, C)."""
        with seeded_global(generator):  # bayesian-torch samples its weights with normal_()
            return torch.stack([self.forward_once(x)[0] for _ in range(n_samples)])

    def loss(self, x: Tensor, y: Tensor, *, n_train: int,
             generator: torch.Generator | None = None,
             batch: tuple[int, int] = (0, 1)) -> Tensor:
        """NLL + KL / N of one weight sample.

        bayesian-torch's KL of a layer is the mean over its weights, not the sum (its
        convention in 0.5), so the prior weighs less than in the ELBO of Blundell et al.
        """
        with seeded_global(generator):
            logits, kl = self.forward_once(x)
        return F.cross_entropy(logits, y) + kl / n_train


MODELS.register(
    "bt_mlp",
    ModelSpec(
        build=BayesianTorchMLP,
        config=BTConfig,
        description="MLP of bayesian-torch LinearReparameterization layers (plug-in example)",
        reference="Krishnan et al. 2022 (bayesian-torch); Blundell et al. 2015",
        stochastic=True,
        shrink={"smoke": {"hidden": (32,), "epochs": 10}},
    ),
)
