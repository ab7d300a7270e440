"""The harness's boundary around a model: every ``sample_logits`` call checked, once, here."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from robustbnn.contract.types import attack_samples, check_sample_logits

__all__ = ["Checked", "checked"]


class Checked(nn.Module):
    """A model whose every ``sample_logits`` call is checked against the contract, once, here.

    The harness wraps each model at the boundary instead of threading its name through every
    attack and evaluation signature; a violation names the model (``ModelContractError``).
    The model gets its own copy of ``x`` at every call (``x.clone()``, which gradients pass
    through), so one that changes its input in place cannot change the harness's data, shared
    by every cell of a process; the contract's clause ``input_unchanged`` refuses it by name.
    """

    def __init__(self, model: nn.Module, name: str) -> None:
        super().__init__()
        self.model = model
        self.name = name
        self.num_classes = model.num_classes

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        """The wrapped model's logits (S, B, C), checked."""
        out = self.model.sample_logits(x.clone(), n_samples, generator=generator)
        return check_sample_logits(out, n_samples, x, self.num_classes, self.name)

    def attack_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        """The wrapped model's attack logits (S, B, C), checked (its ``sample_logits`` when
        it has none: :func:`robustbnn.contract.types.attack_samples`)."""
        out = attack_samples(self.model, x.clone(), n_samples, generator)
        call = "attack_logits" if hasattr(self.model, "attack_logits") else "sample_logits"
        return check_sample_logits(out, n_samples, x, self.num_classes, self.name, call=call)


def checked(model: nn.Module) -> Checked:
    """``model`` with its contract checked at every call, wrapped at most once.

    Library functions that a user may call with a raw model (attacks, evaluation, the sanity
    checks) call this at their entry; the harness passes models it has already wrapped
    (named by their registry name), which come back unchanged, so each ``sample_logits``
    call is checked exactly once.

    Args:
        model: A model with the ``sample_logits`` contract, or a :class:`Checked` one.

    Returns:
        ``model`` itself when it is a :class:`Checked`, else ``Checked(model, name)`` named
        by its class (e.g. ``'LinearModel'``) in contract errors.
    """
    return model if isinstance(model, Checked) else Checked(model, type(model).__name__)
