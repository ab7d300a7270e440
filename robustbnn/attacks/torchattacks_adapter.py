"""Run any torchattacks attack on a registry model: an ``nn.Module`` of the MC predictive.

torchattacks (optional extra ``attacks``) attacks an ``nn.Module`` whose forward returns
logits and takes ``nn.CrossEntropyLoss`` of them. :class:`PredictiveModule` returns
log p̄(y | x) = log (1/S) Σ_s softmax(f_s(x)), computed with logsumexp, so torchattacks'
cross-entropy is exactly our ``objective="predictive"`` loss, −log p̄(y | x). Each forward
draws ``n_samples`` fresh posterior samples from the module's generator.

torchattacks calls ``eval()`` (or ``train()``) on the module it attacks. The wrapper keeps
that to itself: its ``train`` records the mode on the wrapper only, so the registry model's
mode stays as the harness set it (STYLE.md §2). Either way a registry model samples the same
in both modes (the contract tests check it): dropout stays on for ``mc_dropout`` and weight
noise for BbB.

torchattacks pins ``requests~=2.25.1``; install it in an isolated environment or with
``pip install --no-deps torchattacks`` (its other requirements are robustbnn's own).

Example:
    >>> import torch, torchattacks                                     # doctest: +SKIP
    >>> from robustbnn.attacks.torchattacks_adapter import PredictiveModule
    >>> net = PredictiveModule(model, n_samples=32,
    ...                        generator=torch.Generator().manual_seed(0))  # doctest: +SKIP
    >>> x_adv = torchattacks.PGD(net, eps=0.1, alpha=0.01, steps=40)(x, y)  # doctest: +SKIP
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from robustbnn.contract.checked import checked
from robustbnn.metrics.classification import log_predictive_probs

__all__ = ["PredictiveModule"]


class PredictiveModule(nn.Module):
    """A registry model as a module whose forward is log p̄(· | x), shape (B, C).

    Args:
        model: A registry model (``sample_logits(x, S, *, generator) -> (S, B, C)``), checked
            at every forward (:func:`~robustbnn.contract.checked.checked`).
        n_samples: S, posterior samples per forward (S_attack).
        generator: Source of every forward's samples; ``None`` = torch's global RNG.
    """

    def __init__(self, model: nn.Module, n_samples: int = 1, *,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        if n_samples < 1:
            raise ValueError(f"n_samples must be >= 1, got {n_samples}")
        self.model = checked(model)
        self.n_samples = n_samples
        self.generator = generator

    def train(self, mode: bool = True) -> PredictiveModule:
        """Set this wrapper's mode only (``eval()`` calls it too): the wrapped model's mode is
        the harness's, never an attack library's."""
        self.training = mode
        return self

    def forward(self, x: Tensor) -> Tensor:
        """log of the MC predictive mean, (B, C): a valid ``CrossEntropyLoss`` input.

        The samples are the model's attack samples
        (:func:`~robustbnn.contract.types.attack_samples`): this module exists to be attacked.
        """
        logits = self.model.attack_logits(x, self.n_samples, generator=self.generator)
        return log_predictive_probs(logits)  # (B, C)
