"""The budget the harness holds every attack to: its declared eps-ball and the [0, 1] box.

Every adversarial batch an attack hands back is checked here before it is scored, so an attack
that leaves its ball (or returns blank images) is refused by name instead of being scored.

Example:
    >>> import torch
    >>> x = torch.full((2, 3), 0.5)
    >>> check_budget(x, x + 0.1, 0.1, "linf", attack="pgd")
    >>> try:
    ...     check_budget(x, torch.zeros_like(x), 0.1, "linf", attack="cheat")
    ... except AttackBudgetError as err:
    ...     str(err).split(";")[0]
    "attack 'cheat' left its L∞ ball of eps=0.1: example 0 is at distance 0.5"
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from robustbnn.errors import AttackBudgetError
from robustbnn.results.names import NORMS

__all__ = ["RTOL", "check_budget", "distances"]

RTOL = 1e-5  # float rounding of a projection: (x0 + eps) - x0 may exceed eps by an ulp
ATOL = 1e-6


def distances(x: Tensor, x_adv: Tensor, norm: str) -> Tensor:
    """Per-example distance ||x_adv - x|| in ``norm``, shape (B,), float64."""
    delta = (x_adv.detach() - x.detach()).flatten(1).double()  # (B, D)
    if norm == "linf":
        return delta.abs().amax(1) if delta.shape[1] else delta.new_zeros(len(delta))
    if norm == "l2":
        return delta.norm(dim=1)
    raise ValueError(f"unknown norm {norm!r}; known: {list(NORMS)}")


def check_budget(x: Tensor, x_adv: Tensor, eps: float | None, norm: str, *, attack: str,
                 box: bool = True) -> None:
    """Refuse ``x_adv`` unless every example is within ``eps`` of ``x`` and inside [0, 1].

    Args:
        x: Clean inputs, shape (B, *).
        x_adv: The attack's inputs, shape (B, *).
        eps: The radius; None = unbounded (only the box is checked).
        norm: ``"linf"`` or ``"l2"``.
        attack: The attack's name, for the message.
        box: Whether x_adv must lie in [0, 1] (FGSM without clipping, BHN's protocol, is not).

    Raises:
        AttackBudgetError: Naming the attack, the norm, eps, the worst example and its
            distance (or value outside [0, 1]), and the way out.
    """
    if x_adv.shape != x.shape:
        raise AttackBudgetError(f"attack {attack!r} returned shape {tuple(x_adv.shape)} for "
                                f"inputs of shape {tuple(x.shape)}; return x_adv shaped as x")
    if not bool(torch.isfinite(x_adv).all()):
        raise AttackBudgetError(f"attack {attack!r} returned NaN or inf inputs; return finite "
                                "x_adv in [0, 1]")
    fix = "keep ||x_adv - x|| <= eps (project onto the ball) and x_adv in [0, 1]"
    if eps is not None and len(x):
        dist = distances(x, x_adv, norm)
        worst = int(dist.argmax())
        if dist[worst].item() > eps * (1 + RTOL) + ATOL or math.isnan(dist[worst].item()):
            raise AttackBudgetError(f"attack {attack!r} left its {NORMS[norm]} ball of "
                                    f"eps={eps:g}: example {worst} is at distance "
                                    f"{dist[worst].item():.6g}; {fix}")
    if box and len(x):
        flat = x_adv.detach().flatten(1)
        low, high = flat.amin(1), flat.amax(1)
        outside = torch.maximum(-low, high - 1).clamp(min=0)
        worst = int(outside.argmax())
        if outside[worst].item() > ATOL:
            value = low[worst] if -low[worst] >= high[worst] - 1 else high[worst]
            raise AttackBudgetError(f"attack {attack!r} left the [0, 1] box: example {worst} "
                                    f"has a value {value.item():.6g}; {fix}")
