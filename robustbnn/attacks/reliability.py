"""Attack-reliability checks that only stochastic models need (beside ``sanity``'s Carlini checks).

An EOT attack is only as good as its gradient estimate. Three symptoms say the reported robust
accuracy is an upper bound from a weak attack, not a property of the model (Athalye, Carlini &
Wagner 2018, arXiv:1802.00420; Carlini et al. 2019, arXiv:1902.06705, §4-5):

* **transfer beats EOT**: attacking one frozen posterior sample (a deterministic network) and
  evaluating the adversarial inputs on the posterior predictive lowers accuracy more than the
  EOT attack on the predictive itself (:func:`transfer_attack`);
* **low gradient signal-to-noise ratio** across posterior samples (:func:`gradient_snr`): the
  attack's S-sample mean gradient is mostly sampling noise;
* **black box beats white box**: a score-based attack (Square, through the torchattacks adapter
  when that extra is installed, :class:`Square`) finds more adversarial inputs than the
  gradient attack.
"""

from __future__ import annotations

import dataclasses
import importlib.util

import torch
from torch import Tensor

from robustbnn.attacks._grad import GradientSettings, mc_input_grad
from robustbnn.attacks.pgd import PGD
from robustbnn.attacks.sanity import FrozenSample
from robustbnn.contract.checked import checked

__all__ = ["Square", "gradient_snr", "has_torchattacks", "transfer_attack"]


def gradient_snr(model: torch.nn.Module, x: Tensor, y: Tensor, *, n_samples: int,
                 objective: str = "expected", generator: torch.Generator | None) -> Tensor:
    """Per example, the signal-to-noise ratio of ONE posterior sample's input gradient.

    With g_1 .. g_S the gradients of ``objective`` under S single posterior samples (each its
    own draw from ``generator``) and ḡ their mean::

        snr = ||ḡ||_2 / sqrt((1/(S-1)) Σ_s ||g_s - ḡ||²)

    An S-sample EOT gradient has ``snr * sqrt(S)``. Deterministic models give ``inf``.

    Returns:
        Shape (B,), float64.

    Raises:
        ValueError: When ``n_samples < 2`` (no spread to measure).
    """
    if n_samples < 2:
        raise ValueError(f"gradient_snr needs n_samples >= 2, got {n_samples}")
    model = checked(model)
    one = GradientSettings(1, objective)
    grads = torch.stack([
        mc_input_grad(model, x, y, one, generator=generator).flatten(1).double()
        for _ in range(n_samples)])  # (S, B, D)
    mean = grads.mean(0)
    spread = (grads - mean).square().sum(-1).sum(0) / (n_samples - 1)  # (B,)
    signal = mean.norm(dim=-1)
    return torch.where(spread > 0, signal / spread.sqrt(),
                       torch.full_like(signal, float("inf")))


def transfer_attack(model: torch.nn.Module, x: Tensor, y: Tensor, attack: PGD, *,
                    member: torch.Generator, generator: torch.Generator | None) -> Tensor:
    """``attack`` run on one frozen posterior sample of ``model`` (picked by ``member``'s
    state, :class:`robustbnn.attacks.sanity.FrozenSample`), for evaluation on the predictive.

    The frozen sample ignores the posterior generator it is passed, so ``generator`` only
    draws the random starts: pass the EOT attack's start stream and a deterministic model's
    transfer attack is its EOT attack.
    """
    frozen = FrozenSample(model, member)
    return attack.checkpoints(frozen, x, y, (attack.steps,), generator=generator)[attack.steps]


def has_torchattacks() -> bool:
    """Whether the optional ``attacks`` extra (torchattacks) is importable."""
    return importlib.util.find_spec("torchattacks") is not None


@dataclasses.dataclass(frozen=True)
class Square:
    """Square (Andriushchenko et al. 2020, arXiv:1912.00049), L-infinity, margin loss, through
    :class:`robustbnn.attacks.torchattacks_adapter.PredictiveModule`. Needs the ``attacks``
    extra (check :func:`has_torchattacks`).

    Attributes:
        eps: L-infinity radius.
        n_queries: Queries per example.
        n_samples: S_attack, posterior samples per query.
        seed: torchattacks' own seed for its square proposals.
    """

    eps: float
    n_queries: int
    n_samples: int = 1
    seed: int = 0

    def __call__(self, model: torch.nn.Module, x: Tensor, y: Tensor, *,
                 generator: torch.Generator | None = None) -> Tensor:
        """Adversarial inputs within ``eps`` of ``x``, shape of ``x``.

        Args:
            model: A registry model, checked at every query.
            x: Inputs in [0, 1], shape (B, *).
            y: True labels, shape (B,).
            generator: Source of every query's posterior samples.

        Raises:
            ModuleNotFoundError: When torchattacks is not installed.
        """
        import torchattacks  # noqa: PLC0415 - optional extra, imported only when asked for

        from robustbnn.attacks.torchattacks_adapter import PredictiveModule  # noqa: PLC0415

        net = PredictiveModule(model, self.n_samples, generator=generator)
        attack = torchattacks.Square(net, norm="Linf", eps=self.eps, n_queries=self.n_queries,
                                     n_restarts=1, loss="margin", seed=self.seed)
        with torch.random.fork_rng(devices=[] if x.device.type == "cpu" else [x.device]):
            return attack(x, y).detach()
