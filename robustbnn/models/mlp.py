"""MLE and dropout-trained baselines (deterministic at test time), and the dropout net they share.

References:
    Srivastava et al., "Dropout: A Simple Way to Prevent Neural Networks from Overfitting",
    JMLR 2014. Used as the "MLE" and "dropout" rows of Krueger et al. 2017 (BHN, Table 1)
    and Blundell et al. 2015 (Table 1).
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from robustbnn.config import DROP_RATE, NON_NEGATIVE, POSITIVE_INT, OneOf, Range, TrainConfig
from robustbnn.errors import ConfigError
from robustbnn.models._blocks import sample_blocks
from robustbnn.models._dropout import drop
from robustbnn.models._kept_units import check_attack_masks, kept_unit_pass
from robustbnn.models.base import MODELS, SMOKE, BayesianModule, ModelSpec
from robustbnn.models.nets import (
    ACTIVATIONS,
    INIT,
    ConvFeatures,
    activation,
    flat_features,
    linear_stack,
)

ARCHS = ("mlp", "cnn")
# Per-sample masks take blocks of this many times the samples of the per-example path: a
# sub-network's activations are about half as wide, and the gathered weights favour fewer,
# larger calls. Measured on 2 CPU cores, 784-400-400-10, MC dropout / BB-α (S = 32 attack
# step on B = 500; S = 100 predictive on B = 1,000; ms): factor 2: 31 / 71, 92 / 184;
# 4: 31 / 61, 80 / 187; 8: 29 / 63, 87 / 165; 16: 30 / 59, 86 / 181; one block: 33 / 66,
# 138 / 277.
KEPT_BLOCK_FACTOR = 8


@dataclasses.dataclass(frozen=True)
class MLPConfig(TrainConfig):
    """A ReLU MLP trained by maximum likelihood with Adam."""

    hidden: tuple[int, ...] = (400, 400)  # BbB Table 1 smallest net; BHN uses 800/1200
    activation: str = "relu"  # lasagne DenseLayer default [CODE BHN]; "gelu" for BHN Table 2

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "hidden": POSITIVE_INT, "activation": OneOf(tuple(ACTIVATIONS)),
    }


@dataclasses.dataclass(frozen=True)
class NetConfig(MLPConfig):
    """An MLP, or Li & Gal's small CNN (``arch="cnn"``), for the dropout family of models.

    The CNN is conv 3×3 → act → conv 3×3 → act → max-pool 2×2 → flatten → [dropout] →
    dense ``cnn_hidden`` → act → [dropout] → dense C; ``hidden`` applies to the MLP only.
    """

    arch: str = "mlp"  # "mlp" or "cnn" (Li & Gal 2017 §5.2, Fig. 5) [CODE train_model.py]
    cnn_channels: tuple[int, ...] = (32, 32)  # 3x3 valid convs [CODE get_logit_cnn_layers]
    cnn_hidden: tuple[int, ...] = (100,)  # dense units of the CNN head [TEXT-LG §5.2]
    # Dense-layer initialisation (robustbnn.models.nets.INITS): PyTorch's default here; the
    # papers' code used "glorot" (Lasagne, Keras), which `robustbnn reproduce` sets.
    init: str = "torch"
    init_scale: float = 0.0  # the bound of init "uniform" (BbB tutorial: 0.6)

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "arch": OneOf(ARCHS), "cnn_channels": POSITIVE_INT, "cnn_hidden": POSITIVE_INT,
        "init": INIT, "init_scale": NON_NEGATIVE,
    }


@dataclasses.dataclass(frozen=True)
class MLEConfig(NetConfig):
    """A network trained by maximum likelihood with Adam."""

    # L2 coupled into the optimiser update; the BHN AD baselines use 1e-5 on all parameters
    # [CODE BHN dk_anomaly_detection.py, docs/protocols.md §1.5], BHN Table 1 none.
    weight_decay: float = 0.0


@dataclasses.dataclass(frozen=True)
class DropoutConfig(MLEConfig):
    """A network trained with dropout and evaluated with the weight-scaled (plain) network."""

    p: float = 0.5  # drop rate after each hidden layer [CODE BHN dk_anomaly_detection.py]

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "p": DROP_RATE,
    }


class DropoutMLP(BayesianModule):
    """An MLP or small CNN with optional dropout after each hidden layer (and on the input).

    ``mc=True`` keeps dropout on at test time with its own masks (MC dropout); ``mc=False``
    trains with dropout and predicts with the deterministic network (inverted dropout, so
    the weights need no rescaling).

    With ``conv`` channels the net starts with :class:`~robustbnn.models.nets.ConvFeatures`;
    then, as in Li & Gal's CNN, dropout ``p`` acts on the conv features (before every dense
    layer, never before a conv) and ``input_p`` is unused.
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
        conv: tuple[int, ...] = (),
        init: str = "torch",
        init_scale: float = 0.0,
        attack_masks: str = "per_sample",
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        check_attack_masks(attack_masks, "mc_dropout")
        self.num_classes = num_classes
        self.p, self.input_p, self.mc = p, input_p, mc
        self.attack_masks = attack_masks if mc else None  # the masks of attack gradients
        self.act = activation(act)
        self.features = ConvFeatures(input_shape, conv, act, generator) if conv else None
        n_in = flat_features(input_shape) if self.features is None else self.features.out_features
        self.head_p = p if conv else input_p  # drop rate before the first dense layer
        self.layers = linear_stack([n_in, *hidden, num_classes], generator, init=init,
                                   scale=init_scale)

    def _forward(self, x: Tensor, n_samples: int, generator: torch.Generator | None,
                 stochastic: bool, masks: str = "per_example") -> Tensor:
        # The conv trunk has no noise: computed once and shared by all samples.
        h = x.flatten(1) if self.features is None else self.features(x)  # (B, D)
        last = len(self.layers) - 1
        noisy = stochastic and (self.head_p > 0 or (self.p > 0 and last > 0))
        if not noisy:
            for i, layer in enumerate(self.layers):
                h = layer(h) if i == last else self.act(layer(h))
            return h.expand(n_samples, *h.shape)  # (S, B, C), identical slices
        start = 0
        if self.head_p == 0:  # without dropout on its input the first layer is exact to share
            h, start = self.act(self.layers[0](h)), 1
        width = max(h.shape[-1], *(layer.out_features for layer in self.layers[start:]))
        p_in = self.head_p if start == 0 else self.p  # the dropout on layer ``start``'s input
        if masks == "per_sample":
            sizes = sample_blocks(n_samples, h.shape[0], max(1, width // KEPT_BLOCK_FACTOR),
                                  h.device)
            return kept_unit_pass(h, self.layers[start:], self.act, p_in, self.p, sizes,
                                  generator)
        blocks = [self._noisy_tail(h, s, start, p_in, generator)
                  for s in sample_blocks(n_samples, h.shape[0], width, h.device)]
        return blocks[0] if len(blocks) == 1 else torch.cat(blocks)  # (S, B, C)

    def _noisy_tail(self, h: Tensor, n_samples: int, start: int, p: float,
                    generator: torch.Generator | None) -> Tensor:
        """Layers ``start``... for ``n_samples`` masks, from their shared input h (B, D), which
        drops at rate ``p``."""
        # (B, D) broadcasts against the (S, B, D) mask: no copy of h first.
        h = drop(h.expand(n_samples, *h.shape), p, generator)
        scale = 1.0 / (1.0 - p)  # inverted dropout's rescaling, folded into the next GEMM
        last = len(self.layers) - 1
        for i in range(start, last + 1):
            h = scaled_linear(h, self.layers[i], scale)
            scale = 1.0
            if i < last:
                h = self.act(h)
                if self.p > 0:
                    # Without autograd (evaluation) the fresh activation takes the mask in
                    # place: the same values, one (S, B, H) allocation fewer.
                    h = drop(h, self.p, generator, inplace=not h.requires_grad)
                    scale = 1.0 / (1.0 - self.p)
        return h

    def sample_logits(
        self, x: Tensor, n_samples: int, *, generator: torch.Generator | None = None
    ) -> Tensor:
        """Logits, shape (S, B, C); identical slices unless ``mc``; a mask per example."""
        return self._forward(x, n_samples, generator, stochastic=self.mc)

    def attack_logits(
        self, x: Tensor, n_samples: int, *, generator: torch.Generator | None = None
    ) -> Tensor:
        """Logits for a Monte Carlo input gradient, shape (S, B, C).

        With ``attack_masks="per_sample"`` one mask per sample for the whole batch, each
        sample computing only its kept units (:mod:`robustbnn.models._kept_units`): every
        example's samples have the distribution of :meth:`sample_logits`, the examples share
        them. Otherwise :meth:`sample_logits`.
        """
        return self._forward(x, n_samples, generator, stochastic=self.mc,
                             masks=self.attack_masks or "per_example")

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


def scaled_linear(h: Tensor, layer: nn.Linear, scale: float) -> Tensor:
    """``layer(scale · h)`` for h of shape (*, in), with the scale applied inside one GEMM.

    ``addmm``'s ``alpha`` multiplies the product, not the bias, so inverted dropout's
    rescaling costs no pass over h.
    """
    if scale == 1.0:
        return layer(h)
    flat = h.reshape(-1, h.shape[-1])
    if layer.bias is None:
        out = torch.mm(flat, layer.weight.t()).mul_(scale)
    else:
        out = torch.addmm(layer.bias, flat, layer.weight.t(), alpha=scale)
    return out.view(*h.shape[:-1], out.shape[-1])


def build_net(cfg: NetConfig, input_shape: tuple[int, ...], num_classes: int,
              generator: torch.Generator | None, *, cls: type[DropoutMLP] = DropoutMLP,
              **kwargs: Any) -> DropoutMLP:
    """Build the MLP or CNN that ``cfg.arch`` names.

    Args:
        cfg: The config (``arch``, ``hidden``, ``activation``, ``cnn_*``).
        input_shape: Shape of one input.
        num_classes: C.
        generator: Source of the initial parameters.
        cls: :class:`DropoutMLP` or a subclass.
        **kwargs: Passed on to ``cls`` (``p``, ``input_p``, ``mc``, ...).

    Raises:
        ConfigError: When ``cfg.arch`` is unknown.
    """
    if cfg.arch not in ARCHS:
        raise ConfigError(f"unknown arch {cfg.arch!r}; known: {sorted(ARCHS)}")
    cnn = cfg.arch == "cnn"
    return cls(input_shape, num_classes, cfg.cnn_hidden if cnn else cfg.hidden, cfg.activation,
               conv=cfg.cnn_channels if cnn else (), init=cfg.init, init_scale=cfg.init_scale,
               generator=generator, **kwargs)


def build_mlp(cfg: MLEConfig, input_shape: tuple[int, ...], num_classes: int,
              generator: torch.Generator | None) -> DropoutMLP:
    """Build the MLE network."""
    return build_net(cfg, input_shape, num_classes, generator)


def build_dropout(cfg: DropoutConfig, input_shape: tuple[int, ...], num_classes: int,
                  generator: torch.Generator | None) -> DropoutMLP:
    """Build the dropout-trained network, deterministic at test time."""
    return build_net(cfg, input_shape, num_classes, generator, p=cfg.p, mc=False)


MODELS.register(
    "mlp",
    ModelSpec(
        build=build_mlp,
        config=MLEConfig,
        description="MLE MLP (Adam), deterministic",
        reference="Krueger et al. 2017 (BHN), MLE baseline",
        stochastic=False,
        family="deterministic",
        shrink={"smoke": SMOKE},
    ),
)

MODELS.register(
    "dropout",
    ModelSpec(
        build=build_dropout,
        config=DropoutConfig,
        description="MLP trained with dropout p = 0.5 after each hidden layer, deterministic",
        reference="Srivastava et al. 2014 (JMLR); the dropout baseline of BHN Tables 1-2",
        stochastic=False,
        family="deterministic",
        shrink={"smoke": SMOKE},
    ),
)
