"""Plain backbones and generator-aware initialisation; no Bayesian logic here."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from robustbnn.errors import ConfigError

ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "relu": F.relu,
    "gelu": lambda t: F.gelu(t, approximate="tanh"),  # BHN AD launchers [PROTOCOLS §8.1]
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
}


def activation(name: str) -> Callable[[Tensor], Tensor]:
    """Look up a hidden nonlinearity by name, with an error that lists the known ones."""
    if name not in ACTIVATIONS:
        raise ConfigError(f"unknown activation {name!r}; known: {sorted(ACTIVATIONS)}")
    return ACTIVATIONS[name]


@torch.no_grad()
def init_linear_(layer: nn.Linear, generator: torch.Generator | None) -> nn.Linear:
    """PyTorch's default ``nn.Linear`` initialisation, drawn from ``generator``."""
    nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
    if layer.bias is not None:
        bound = 1 / math.sqrt(layer.in_features) if layer.in_features > 0 else 0.0
        nn.init.uniform_(layer.bias, -bound, bound, generator=generator)
    return layer


def linear_stack(
    sizes: list[int], generator: torch.Generator | None, *, bias: bool = True
) -> nn.ModuleList:
    """Linear layers ``sizes[0] -> sizes[1] -> ... -> sizes[-1]``, initialised from ``generator``."""
    return nn.ModuleList(
        init_linear_(nn.Linear(a, b, bias=bias), generator) for a, b in zip(sizes, sizes[1:])
    )


def flat_features(input_shape: tuple[int, ...]) -> int:
    """Number of input features of a flattened image of shape ``input_shape`` (C, H, W)."""
    return math.prod(input_shape)
