"""The harness's boundary around a model: every ``sample_logits`` call checked, once, here."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from robustbnn.contract.types import attack_samples, check_sample_logits

__all__ = ["Checked"]

class Checked(nn.Module):
    """A model whose every ``sample_logits`` call is checked against the contract, once, here.

    The harness wraps each model at the boundary instead of threading its name through every
    attack and evaluation signature; a violation names the model (``ModelContractError``).
    """

    def __init__(self, model: nn.Module, name: str) -> None:
        super().__init__()
        self.model = model
        self.name = name
        self.num_classes = model.num_classes

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        """The wrapped model's logits (S, B, C), checked."""
        out = self.model.sample_logits(x, n_samples, generator=generator)
        return check_sample_logits(out, n_samples, x, self.num_classes, self.name)

    def attack_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        """The wrapped model's attack logits (S, B, C), checked (its ``sample_logits`` when
        it has none: :func:`robustbnn.attacks._grad.attack_samples`)."""
        out = attack_samples(self.model, x, n_samples, generator)
        call = "attack_logits" if hasattr(self.model, "attack_logits") else "sample_logits"
        return check_sample_logits(out, n_samples, x, self.num_classes, self.name, call=call)
