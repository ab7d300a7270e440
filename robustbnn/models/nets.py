"""Plain backbones and generator-aware initialisation; no Bayesian logic here."""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import pairwise

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from robustbnn.config import POSITIVE, OneOf
from robustbnn.errors import ConfigError

ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {
    "relu": F.relu,
    "gelu": lambda t: F.gelu(t, approximate="tanh"),  # BHN AD launchers [docs/protocols.md §8.1]
    "tanh": torch.tanh,
    "sigmoid": torch.sigmoid,
}


def activation(name: str) -> Callable[[Tensor], Tensor]:
    """Look up a hidden nonlinearity by name, with an error that lists the known ones."""
    if name not in ACTIVATIONS:
        raise ConfigError(f"unknown activation {name!r}; known: {sorted(ACTIVATIONS)}")
    return ACTIVATIONS[name]


@torch.no_grad()
def _init_default_(layer: nn.Linear | nn.Conv2d, generator: torch.Generator | None) -> None:
    """PyTorch's default initialisation of a linear or conv layer, drawn from ``generator``."""
    nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
    if layer.bias is not None:
        fan_in = layer.weight[0].numel()
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        nn.init.uniform_(layer.bias, -bound, bound, generator=generator)


# Initialisations of a dense layer, by config name [docs/protocols.md §1.3, §3.2, §4.4]:
# "torch"   PyTorch's nn.Linear default: U(±1/sqrt(fan_in)) weights (kaiming a=sqrt 5) and bias;
# "glorot"  Glorot-uniform weights U(±sqrt(6/(fan_in+fan_out))), zero bias: Lasagne's DenseLayer
#           (the BHN code) and Keras 1's Dense (Li & Gal's code); about twice the torch bound
#           for 784-256 layers;
# "uniform" U(±init_scale) weights and bias: the Bayes by Backprop tutorial's μ (0.6).
INITS = ("torch", "glorot", "uniform")
# The ``init`` field's range: its choices, and "uniform" needs a bound (checked before work).
INIT = OneOf(INITS, needs=(("uniform", "init_scale", POSITIVE),))


def check_init(init: str, scale: float = 0.0) -> None:
    """Raise ConfigError for an unknown initialisation, or "uniform" without a positive scale."""
    if init not in INITS:
        raise ConfigError(f"unknown init {init!r}; known: {list(INITS)}")
    if init == "uniform" and not scale > 0:
        raise ConfigError(f"init 'uniform' needs init_scale > 0, got {scale}; "
                          f"set it with --set NAME.init_scale=0.6")


@torch.no_grad()
def init_linear_(layer: nn.Linear, generator: torch.Generator | None, init: str = "torch",
                 scale: float = 0.0) -> nn.Linear:
    """Initialise ``layer`` in place as :data:`INITS` names it, drawn from ``generator``.

    Raises:
        ConfigError: For an unknown ``init``, or ``"uniform"`` with ``scale <= 0``.
    """
    check_init(init, scale)
    if init == "torch":
        _init_default_(layer, generator)
    elif init == "glorot":
        nn.init.xavier_uniform_(layer.weight, generator=generator)
        if layer.bias is not None:
            layer.bias.zero_()
    else:
        nn.init.uniform_(layer.weight, -scale, scale, generator=generator)
        if layer.bias is not None:
            nn.init.uniform_(layer.bias, -scale, scale, generator=generator)
    return layer


def init_conv_(layer: nn.Conv2d, generator: torch.Generator | None) -> nn.Conv2d:
    """PyTorch's default ``nn.Conv2d`` initialisation, drawn from ``generator``."""
    _init_default_(layer, generator)
    return layer


def linear_stack(
    sizes: list[int], generator: torch.Generator | None, *, bias: bool = True,
    init: str = "torch", scale: float = 0.0,
) -> nn.ModuleList:
    """Linear layers ``sizes[0] -> sizes[1] -> ... -> sizes[-1]``, initialised from
    ``generator``."""
    return nn.ModuleList(
        init_linear_(nn.Linear(a, b, bias=bias), generator, init, scale)
        for a, b in pairwise(sizes)
    )


def flat_features(input_shape: tuple[int, ...]) -> int:
    """Number of input features of a flattened image of shape ``input_shape`` (C, H, W)."""
    return math.prod(input_shape)


class ConvFeatures(nn.Module):
    """3×3 valid convolutions, each followed by the nonlinearity, then one 2×2 max-pool.

    With ``channels=(32, 32)`` and ReLU this is the trunk of Li & Gal's MNIST CNN (the Keras
    ``mnist_cnn`` example) [CODE Dropout_BBalpha BBalpha_dropout.py ``get_logit_cnn_layers``]:
    28×28 → 26×26 → 24×24 → 12×12, so 32·12·12 = 4608 features.

    Args:
        input_shape: (C, H, W) of one input.
        channels: Output channels of each convolution.
        act: Name of the nonlinearity after each convolution.
        generator: Source of the initial parameters.

    Raises:
        ConfigError: When the input is not an image or is too small for the convolutions.
    """

    def __init__(self, input_shape: tuple[int, ...], channels: tuple[int, ...], act: str,
                 generator: torch.Generator | None) -> None:
        super().__init__()
        if len(input_shape) != 3:
            raise ConfigError(f"the cnn needs image inputs (C, H, W), got shape {input_shape}")
        c, h, w = input_shape
        convs = []
        for out in channels:
            convs.append(init_conv_(nn.Conv2d(c, out, 3), generator))
            c, h, w = out, h - 2, w - 2
        if h < 2 or w < 2:
            raise ConfigError(
                f"input {input_shape} is too small for {len(channels)} 3x3 convolutions and "
                f"a 2x2 max-pool"
            )
        self.input_shape = tuple(input_shape)
        self.convs = nn.ModuleList(convs)
        self.act = activation(act)
        self.out_features = c * (h // 2) * (w // 2)

    def forward(self, x: Tensor) -> Tensor:
        """Flattened features (B, out_features) of inputs of shape (B, C, H, W) or (B, D)."""
        h = x.reshape(-1, *self.input_shape)
        for conv in self.convs:
            h = self.act(conv(h))
        return F.max_pool2d(h, 2).flatten(1)
