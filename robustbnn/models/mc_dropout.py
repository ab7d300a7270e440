"""MC dropout: dropout kept on at test time, averaging softmax outputs over masks.

References:
    Gal & Ghahramani, "Dropout as a Bayesian Approximation: Representing Model Uncertainty
    in Deep Learning", ICML 2016, arXiv:1506.02142. Baseline of Krueger et al. 2017 (BHN):
    p = 0.5 after every hidden layer, none on the input [CODE BHN ``MCdropout_MLP``].
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import torch

from robustbnn.config import DROP_RATE, OneOf, Range
from robustbnn.models._kept_units import ATTACK_MASKS
from robustbnn.models.base import MODELS, SMOKE, ModelSpec
from robustbnn.models.mlp import DropoutMLP, NetConfig, build_net


@dataclasses.dataclass(frozen=True)
class MCDropoutConfig(NetConfig):
    """MC dropout on an MLP (or, with ``arch="cnn"``, on the dense head of Li & Gal's CNN)."""

    p: float = 0.5  # drop rate after each hidden layer [CODE BHN MCdropout_MLP]
    # No input dropout in BHN's baseline (Li & Gal use p on the input). MLP only: the CNN
    # never drops pixels and drops its conv features with rate p.
    input_p: float = 0.0
    # The masks of attack gradients: one per posterior sample, shared by the batch
    # ("per_sample": each sample computes only its kept units, robustbnn.models._kept_units),
    # or one per example ("per_example"). Exact for every example's gradient; evaluation
    # and training always draw a mask per example.
    attack_masks: str = "per_sample"

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "p": DROP_RATE, "input_p": DROP_RATE, "attack_masks": OneOf(ATTACK_MASKS),
    }


def build_mc_dropout(cfg: MCDropoutConfig, input_shape: tuple[int, ...], num_classes: int,
                     generator: torch.Generator | None) -> DropoutMLP:
    """Build an MC-dropout net whose samples use their own masks in any module mode."""
    return build_net(cfg, input_shape, num_classes, generator, p=cfg.p, input_p=cfg.input_p,
                     mc=True, attack_masks=cfg.attack_masks)


MODELS.register(
    "mc_dropout",
    ModelSpec(
        build=build_mc_dropout,
        config=MCDropoutConfig,
        description="MC dropout, p = 0.5 after each hidden layer, masks kept on at test",
        reference="Gal & Ghahramani 2016, arXiv:1506.02142",
        stochastic=True,
        family="MC dropout",
        shrink={"smoke": SMOKE},
    ),
)
