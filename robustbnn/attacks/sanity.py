"""Sanity checks of an attack evaluation, from the checklist of Carlini et al. 2019.

References:
    Carlini, Athalye, Papernot, Brendel, Rauber, Tsipras, Goodfellow, Madry & Kurakin,
    "On Evaluating Adversarial Robustness", 2019, arXiv:1902.06705: zero gradients, accuracy
    monotone in the perturbation budget, white-box beats random noise, and "verify that
    attacks succeed if randomness is assigned to one fixed value" (docs/pitfalls.md §1.1, §1.6,
    §1.8). AutoAttack's ``checks.py`` flags zero gradients the same way.

Each check is a pure function returning a :class:`Check`: a value, a pass flag, and the
numbers behind it. Attacks are called with the attack generator, evaluations draw from the
evaluation generator, and nothing switches the module mode.

Example:
    >>> accuracy_monotone([0.0, 0.1, 0.2], [0.9, 0.5, 0.75])
    Check(value=0.25, passed=False, detail={'max_rise': 0.25})
    >>> accuracy_monotone([0.0, 0.1, 0.2], [0.9, 0.5, 0.75], tol=0.3).passed
    True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import torch
from torch import Tensor

from robustbnn.attacks._grad import GradientSettings, mc_input_grad
from robustbnn.contract.checked import Checked, checked
from robustbnn.contract.predict import Evaluation

__all__ = [
    "Check",
    "FrozenSample",
    "accuracy_monotone",
    "beats_random_noise",
    "fixed_randomness_succeeds",
    "gradient_nonzero",
]

Attack = Callable[..., Tensor]  # an ATTACKS instance: attack(model, x, y, *, generator)


class Check(NamedTuple):
    """The outcome of a sanity check.

    Attributes:
        value: The checked quantity (see each function).
        passed: Whether the check passed.
        detail: The numbers behind ``value``.
    """

    value: float
    passed: bool
    detail: dict[str, float]


def gradient_nonzero(
    model: torch.nn.Module,
    x: Tensor,
    y: Tensor,
    gradient: GradientSettings | None = None,
    *,
    generator: torch.Generator | None = None,
    min_fraction: float = 1.0,
) -> Check:
    """Fraction of examples whose MC input gradient is not identically zero.

    A zero gradient means the attack cannot move (saturated softmax, masked gradients).

    Args:
        model: A registry model, checked at the call.
        x: Inputs in [0, 1], shape (B, *).
        y: Labels, shape (B,).
        gradient: The gradient's S_attack and objective; ``None`` = one sample, the
            predictive CE of the true labels.
        generator: Source of the posterior samples.
        min_fraction: Pass when the fraction is at least this (AutoAttack: every example).

    Returns:
        ``Check(fraction, fraction >= min_fraction, {"n_zero": ...})``.
    """
    gradient = GradientSettings(1) if gradient is None else gradient
    grad = mc_input_grad(model, x, y, gradient, generator=generator)
    nonzero = (grad.flatten(1) != 0).any(1)  # (B,)
    fraction = float(nonzero.double().mean())
    return Check(fraction, fraction >= min_fraction, {"n_zero": float((~nonzero).sum())})


def accuracy_monotone(eps: Sequence[float], acc: Sequence[float], tol: float = 0.0) -> Check:
    """Whether accuracy does not rise with the budget by more than ``tol``.

    Args:
        eps: Perturbation budgets, any order.
        acc: Accuracy at each budget.
        tol: Allowed rise (MC evaluation noise).

    Returns:
        ``Check(max_rise, max_rise <= tol)``, where ``max_rise`` is the largest accuracy at a
        budget minus the lowest accuracy at any smaller budget (0 for a non-increasing curve).

    Raises:
        ValueError: If the lengths differ or the sequences are empty.
    """
    if len(eps) != len(acc) or not eps:
        raise ValueError(f"eps and acc need the same non-zero length, got {len(eps)} and "
                         f"{len(acc)}")
    ordered = [a for _, a in sorted(zip(eps, acc, strict=True), key=lambda p: p[0])]
    rise, low = 0.0, ordered[0]
    for a in ordered[1:]:
        rise, low = max(rise, a - low), min(low, a)
    return Check(rise, rise <= tol, {"max_rise": rise})


def _accuracy(model: torch.nn.Module, x: Tensor, y: Tensor, evaluation: Evaluation) -> float:
    """Accuracy of the MC predictive of one ``evaluation``."""
    probs = evaluation.probs(model, x)
    return float((probs.mean(0).argmax(-1) == y).double().mean())


def beats_random_noise(
    model: torch.nn.Module,
    x: Tensor,
    y: Tensor,
    attack: Attack,
    evaluation: Evaluation,
    *,
    generator: torch.Generator | None,
    tol: float = 0.0,
) -> Check:
    """Whether the white-box attack is at least as strong as random sign noise of its size.

    The noise is x + eps * r, r uniform in {-1, +1} per pixel (drawn from ``generator``),
    clipped to [0, 1] unless the attack has ``clip=False``. Both are evaluated with
    ``evaluation.s_eval`` fresh samples from ``evaluation.generator``.

    Args:
        model: A registry model, checked at the call.
        x: Inputs in [0, 1], shape (B, *).
        y: Labels, shape (B,).
        attack: An attack with an ``eps`` field (e.g. ``FGSM``, ``PGD``).
        evaluation: S_eval and the evaluation's stream.
        generator: Source of the attack's samples and of the noise.
        tol: Allowed excess of attacked over noisy accuracy (MC evaluation noise).

    Returns:
        ``Check(noise_acc - attack_acc, attack_acc <= noise_acc + tol, {...})``.

    Raises:
        ValueError: If the attack has no ``eps`` (e.g. an unbounded targeted attack).
    """
    eps = getattr(attack, "eps", None)
    if eps is None:
        raise ValueError(f"beats_random_noise needs an attack with an eps budget, got {attack}")
    model = checked(model)
    x_adv = attack(model, x, y, generator=generator)
    sign = torch.randint(0, 2, x.shape, generator=generator, device=x.device)
    x_noise = x + eps * (2 * sign - 1).to(x.dtype)
    if getattr(attack, "clip", True):
        x_noise = x_noise.clamp(0.0, 1.0)
    adv = _accuracy(model, x_adv, y, evaluation)
    noise = _accuracy(model, x_noise, y, evaluation)
    return Check(noise - adv, adv <= noise + tol,
                 {"attack_accuracy": adv, "noise_accuracy": noise, "eps": float(eps)})


class FrozenSample(Checked):
    """One frozen posterior sample of ``model``: randomness assigned to one fixed value.

    Every ``sample_logits`` call replays the generator state captured at construction (the
    ``generator`` passed to the call is ignored) and returns that one draw ``S`` times. For
    models that sample weights this is one deterministic member; for per-example noise such
    as dropout masks the draw depends on the batch size and an example's position, which the
    attack and its evaluation share as long as they pass the same batch.

    It is a :class:`~robustbnn.contract.checked.Checked` model of the same name: the one draw
    is checked, once, and attacks take it as it is.

    Args:
        model: A registry model (a checked one keeps its name; a raw one is named by its
            class).
        generator: Its current state is the frozen randomness (the generator is not advanced).
    """

    def __init__(self, model: torch.nn.Module, generator: torch.Generator) -> None:
        inner = checked(model)
        super().__init__(inner.model, inner.name)
        self._device = generator.device
        self._state = generator.get_state()

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        """The frozen draw's logits repeated ``n_samples`` times, (S, B, C)."""
        replay = torch.Generator(device=self._device)
        replay.set_state(self._state)
        logits = super().sample_logits(x, 1, generator=replay)  # (1, B, C), checked
        return logits.expand(n_samples, *logits.shape[1:])

    def attack_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        """The same frozen draw: an attack differentiates the member it is evaluated on."""
        return self.sample_logits(x, n_samples, generator=generator)


def fixed_randomness_succeeds(
    model: torch.nn.Module,
    x: Tensor,
    y: Tensor,
    attack: Attack,
    *,
    member: torch.Generator,
    generator: torch.Generator | None = None,
) -> Check:
    """Whether the attack lowers accuracy when the randomness is fixed to one sample.

    Attacks and evaluates :class:`FrozenSample` ``(model, member)``, a deterministic member,
    so evaluation needs one forward pass and no evaluation generator. If this fails, a
    failure against the stochastic model says nothing about robustness.

    Args:
        model: A registry model, checked at the call.
        x: Inputs in [0, 1], shape (B, *).
        y: Labels, shape (B,).
        attack: An attack instance.
        member: Generator whose current state picks the frozen sample (not advanced).
        generator: Source of the attack's own randomness (e.g. PGD random starts).

    Returns:
        ``Check(clean_acc - attack_acc, clean_acc - attack_acc > 0, {...})``.
    """
    frozen = FrozenSample(model, member)
    once = Evaluation(s_eval=1)
    clean = _accuracy(frozen, x, y, once)
    x_adv = attack(frozen, x, y, generator=generator)
    adv = _accuracy(frozen, x_adv, y, once)
    return Check(clean - adv, clean - adv > 0.0,
                 {"clean_accuracy": clean, "attack_accuracy": adv})
