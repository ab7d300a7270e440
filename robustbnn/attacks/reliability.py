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
  when that extra is installed, :func:`square_attack`) finds more adversarial inputs than the
  gradient attack.
"""

from __future__ import annotations

import importlib.util

import torch
from torch import Tensor

from robustbnn.attacks._grad import mc_input_grad
from robustbnn.attacks.pgd import PGD
from robustbnn.attacks.sanity import FrozenSample

__all__ = ["gradient_snr", "has_torchattacks", "square_attack", "transfer_attack"]


def gradient_snr(model: torch.nn.Module, x: Tensor, y: Tensor, *, n_samples: int,
                 objective: str = "expected", generator: torch.Generator | None,
                 name: str = "model") -> Tensor:
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
    grads = torch.stack([
        mc_input_grad(model, x, y, n_samples=1, objective=objective, generator=generator,
                      name=name).flatten(1).double()
        for _ in range(n_samples)])  # (S, B, D)
    mean = grads.mean(0)
    spread = (grads - mean).square().sum(-1).sum(0) / (n_samples - 1)  # (B,)
    signal = mean.norm(dim=-1)
    return torch.where(spread > 0, signal / spread.sqrt(),
                       torch.full_like(signal, float("inf")))


def transfer_attack(model: torch.nn.Module, x: Tensor, y: Tensor, attack: PGD, *,
                    member: torch.Generator, generator: torch.Generator | None,
                    start_generator: torch.Generator | None = None,
                    name: str = "model") -> Tensor:
    """``attack`` run on one frozen posterior sample of ``model`` (picked by ``member``'s
    state, :class:`robustbnn.attacks.sanity.FrozenSample`), for evaluation on the predictive.

    Random starts come from ``start_generator`` (``generator`` when None): pass the EOT
    attack's start stream and a deterministic model's transfer attack is its EOT attack.
    """
    frozen = FrozenSample(model, member)
    return attack.checkpoints(frozen, x, y, (attack.steps,), generator=generator,
                              start_generator=start_generator, name=name)[attack.steps]


def has_torchattacks() -> bool:
    """Whether the optional ``attacks`` extra (torchattacks) is importable."""
    return importlib.util.find_spec("torchattacks") is not None


def square_attack(model: torch.nn.Module, x: Tensor, y: Tensor, *, eps: float, n_queries: int,
                  n_samples: int, generator: torch.Generator | None, seed: int,
                  name: str = "model") -> Tensor:
    """Square (Andriushchenko et al. 2020, arXiv:1912.00049), L-infinity, margin loss, through
    :class:`robustbnn.attacks.torchattacks_adapter.PredictiveModule` (``n_samples`` posterior
    samples per query). Needs the ``attacks`` extra.

    Raises:
        ModuleNotFoundError: When torchattacks is not installed (check :func:`has_torchattacks`).
    """
    import torchattacks  # noqa: PLC0415 - optional extra, imported only when asked for

    from robustbnn.attacks.torchattacks_adapter import PredictiveModule  # noqa: PLC0415

    net = PredictiveModule(model, n_samples, generator=generator, name=name)
    attack = torchattacks.Square(net, norm="Linf", eps=eps, n_queries=n_queries, n_restarts=1,
                                 loss="margin", seed=seed)
    with torch.random.fork_rng(devices=[] if x.device.type == "cpu" else [x.device]):
        return attack(x, y).detach()
