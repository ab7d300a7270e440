"""Base class of registry models, the model spec, and the ``MODELS`` registry."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from robustbnn.registry import Registry


class BayesianModule(nn.Module):
    """A classifier with a posterior to sample from.

    Subclasses implement :meth:`sample_logits`; the default :meth:`loss` is the negative
    log-likelihood of one posterior sample, which is maximum likelihood for deterministic
    models and MC-dropout training for dropout models. Variational models override
    :meth:`loss` with their per-example ELBO (NLL + KL / N).
    """

    num_classes: int

    def sample_logits(
        self, x: Tensor, n_samples: int, *, generator: torch.Generator | None = None
    ) -> Tensor:
        """Logits of ``n_samples`` posterior samples.

        Args:
            x: Inputs in [0, 1], shape (B, 1, 28, 28) or (B, D).
            n_samples: S, the number of posterior samples.
            generator: Source of all randomness in the call.

        Returns:
            Logits, shape (S, B, C).
        """
        raise NotImplementedError

    def loss(
        self,
        x: Tensor,
        y: Tensor,
        *,
        n_train: int,
        generator: torch.Generator | None = None,
        batch: tuple[int, int] = (0, 1),
    ) -> Tensor:
        """The per-example training objective for a minibatch (a scalar to minimise).

        Args:
            x: Inputs, shape (B, *).
            y: Labels, shape (B,).
            n_train: Size of the training set, to weigh per-dataset terms such as the KL.
            generator: Source of randomness.
            batch: (i, M): this minibatch's 0-based index in the epoch and the number of
                minibatches, for per-minibatch KL weighting (Blundell et al. 2015, eq. 9).
        """
        logits = self.sample_logits(x, 1, generator=generator)[0]  # (B, C)
        return F.cross_entropy(logits, y)


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """A registry entry.

    Attributes:
        build: ``build(cfg, input_shape, num_classes, generator) -> BayesianModule``;
            parameters are initialised from ``generator`` so a model does not depend on
            what else ran before it.
        config: The frozen config dataclass; ``config()`` holds the paper defaults.
        description: One line for ``robustbnn models``.
        reference: The paper the method comes from.
        stochastic: Whether samples differ from each other.
    """

    build: Callable[[Any, tuple[int, ...], int, torch.Generator | None], BayesianModule]
    config: type
    description: str
    reference: str
    stochastic: bool = True


MODELS: Registry[ModelSpec] = Registry("model")
