"""Tiny models and data shared by tests."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from robustbnn.models.base import BayesianModule


class LinearModel(BayesianModule):
    """A deterministic linear classifier logits = x W + b, for closed-form attack checks."""

    def __init__(self, weight: Tensor, bias: Tensor) -> None:
        super().__init__()
        self.num_classes = weight.shape[1]
        self.weight = nn.Parameter(weight)
        self.bias = nn.Parameter(bias)

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        logits = x.flatten(1) @ self.weight + self.bias  # (B, C)
        return logits.expand(n_samples, *logits.shape)


def build(name: str, *, in_shape=(1, 6, 7), num_classes: int = 7, seed: int = 0, **changes):
    """A small registry model with distinct sizes (so a swapped axis fails)."""
    import dataclasses

    from robustbnn.models import MODELS

    spec = MODELS.get(name)
    cfg = spec.config()
    fields = {f.name for f in dataclasses.fields(cfg)}
    small = {k: v for k, v in {"hidden": (11, 13)}.items() if k in fields}
    cfg = dataclasses.replace(cfg, **{**small, **changes})
    return spec.build(cfg, in_shape, num_classes, torch.Generator().manual_seed(seed))


def draw_dropout_samples(model: nn.Module, mode: str, x: Tensor, n_samples: int,
                         generator: torch.Generator) -> Tensor:
    """A dropout model's attack samples (``"per_sample"``: one mask per sample) or its
    evaluation samples (``"per_example"``), (S, B, C)."""
    sample = model.attack_logits if mode == "per_sample" else model.sample_logits
    return sample(x, n_samples, generator=generator)


def dropout_masks(mode: str, n_samples: int, batch: int, width: int, p: float,
                  generator: torch.Generator) -> Tensor:
    """The 0/1 keep masks a dropout model's ``sample_logits`` draws, in its draw order.

    ``"per_example"``: shape (S, B, width); ``"per_sample"``: (S, 1, width), one mask per
    sample shared by the batch (``robustbnn.models._kept_units`` draws the same bits).
    """
    from robustbnn.models._dropout import keep_mask

    if mode == "per_example":
        return keep_mask((n_samples, batch, width), p, generator=generator).float()
    return keep_mask((n_samples, width), p, generator=generator).float().unsqueeze(1)
