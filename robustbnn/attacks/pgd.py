"""Projected gradient descent with expectation over transformation (EOT) and restarts.

References:
    Madry, Makelov, Schmidt, Tsipras & Vladu, "Towards Deep Learning Models Resistant to
    Adversarial Attacks", ICLR 2018, arXiv:1706.06083 (L-infinity PGD, random start; their
    MNIST setting eps = 0.3, step 0.01, 40 steps). Athalye, Carlini & Wagner, "Obfuscated
    Gradients Give a False Sense of Security", ICML 2018, arXiv:1802.00420 (EOT: average the
    gradient over the defence's randomness; docs/pitfalls.md §1.1).

Each step draws ``n_samples`` fresh posterior samples from the attack's generator and moves
x <- clip(proj_eps(x + alpha * sign(grad)), 0, 1), the gradient being of
``objective`` = ``"expected"`` (EOT, default: mean_s CE) or ``"predictive"`` (CE of p̄).
Each restart begins uniformly in the eps-ball (``random_start``). Restarts are compared per
example by **the attack objective on a fresh draw of ``n_samples`` samples from the attack's
generator** (never the evaluation's), and the highest is kept; ties keep the earlier restart.

Norm: L-infinity. Shapes: x (B, *), y (B,), target (B,) or int -> x_adv (B, *).

Example:
    >>> import torch
    >>> from robustbnn.models import MODELS
    >>> spec = MODELS.get("mlp")
    >>> model = spec.build(spec.config(), (1, 28, 28), 10, torch.Generator().manual_seed(0))
    >>> x, y = torch.rand(4, 1, 28, 28), torch.tensor([0, 1, 2, 3])
    >>> attack = PGD(eps=0.1, step_size=0.02, steps=5, restarts=2, n_samples=1)
    >>> x_adv = attack(model, x, y, generator=torch.Generator().manual_seed(0))
    >>> bool((x_adv - x).abs().max() <= 0.1 + 1e-6), bool(x_adv.min() >= 0), x_adv.shape
    (True, True, torch.Size([4, 1, 28, 28]))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import ClassVar

import torch
from torch import Tensor

from robustbnn.attacks._grad import (
    GradientSettings,
    as_target,
    attack_labels,
    mc_input_grad,
    mc_objective_per_example,
)
from robustbnn.attacks._linf import box, project, random_start
from robustbnn.attacks.base import Attack
from robustbnn.config import NON_NEGATIVE, POSITIVE_INT, OneOf, Range
from robustbnn.contract.checked import Checked, checked

__all__ = ["PGD"]


@dataclasses.dataclass(frozen=True)
class PGD(Attack):
    """L-infinity PGD with EOT gradients, random starts and per-example best-of restarts.

    Attributes:
        eps: L-infinity radius (Madry et al. MNIST: 0.3).
        step_size: alpha, the size of each signed step (Madry et al.: 0.01).
        steps: Steps per restart (Madry et al. training: 40).
        restarts: Independent runs; each example keeps its strongest.
        random_start: Start uniformly in the eps-ball (else at ``x``).
        n_samples: S_attack, fresh posterior samples per step.
        objective: ``"expected"`` (EOT, default), ``"predictive"``, or a margin loss that
            does not saturate, ``"cw"`` or ``"dlr"`` (:mod:`robustbnn.attacks.margin`), each
            a mean over samples.
        label: ``"true"`` or ``"predicted"`` (the MC prediction on the clean input, fixed for
            all steps); unused when a ``target`` is passed.
    """

    eps: float = 0.3
    step_size: float = 0.01
    steps: int = 40
    restarts: int = 1
    random_start: bool = True
    n_samples: int = 10
    objective: str = "expected"
    label: str = "true"

    norm: ClassVar[str] = "linf"
    reference: ClassVar[str] = "Madry et al. 2018, arXiv:1706.06083; Athalye et al. 2018"
    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "eps": NON_NEGATIVE, "step_size": NON_NEGATIVE, "steps": NON_NEGATIVE,
        "restarts": POSITIVE_INT, "n_samples": POSITIVE_INT,
        "objective": OneOf(("expected", "predictive", "cw", "dlr")),
        "label": OneOf(("true", "predicted"))}

    def __post_init__(self) -> None:
        if self.eps < 0 or self.steps < 0 or self.restarts < 1 or self.n_samples < 1:
            raise ValueError(f"need eps >= 0, steps >= 0, restarts >= 1 and n_samples >= 1, "
                             f"got {self.eps}, {self.steps}, {self.restarts}, {self.n_samples}")

    @property
    def gradient(self) -> GradientSettings:
        """The MC gradient of every step: S_attack and the objective, of the labels
        :meth:`_prepare` fixed on the clean input (so the step's label policy is ``"true"``)."""
        return GradientSettings(self.n_samples, self.objective)

    def _prepare(self, model: Checked, x: Tensor, y: Tensor, target: Tensor | int | None,
                 generator: torch.Generator | None) -> _Ball:
        """The clean input, the fixed labels or target, and the box of every step."""
        labels = GradientSettings(self.n_samples, self.objective, self.label)  # checks both
        x0 = x.detach()
        if target is not None:
            target = as_target(target, x0)
        else:
            y = attack_labels(model, x0, y, labels, generator=generator)
        return _Ball(x0, y, target, *box(x0, self.eps))

    def _path(self, model: Checked, ball: _Ball, steps: int, generator: torch.Generator | None,
              start_generator: torch.Generator | None) -> Iterator[Tensor]:
        """One restart: yield the start (step 0), then ``x_adv`` after every step."""
        x_adv = ball.x0
        if self.random_start:
            x_adv = random_start(ball.x0, self.eps, ball.lo, ball.hi, start_generator)
        yield x_adv
        for _ in range(steps):
            grad = mc_input_grad(model, x_adv, ball.y, self.gradient, target=ball.target,
                                 generator=generator)
            x_adv = project(x_adv + self.step_size * grad.sign(), ball.lo, ball.hi)
            yield x_adv

    def _score(self, model: Checked, x_adv: Tensor, ball: _Ball,
               generator: torch.Generator | None) -> Tensor:
        return mc_objective_per_example(model, x_adv, ball.y, self.gradient,
                                        target=ball.target, generator=generator)

    def runs(self, model: torch.nn.Module, x: Tensor, y: Tensor, *,
             target: Tensor | int | None = None,
             generator: torch.Generator | None = None) -> Iterator[tuple[Tensor, Tensor]]:
        """Yield ``(x_adv, score)`` for every restart; ``score`` (B,) is what selection uses.

        ``score`` is the attack objective (CE of the label, or log p̄(target) when targeted)
        on a fresh draw of ``n_samples`` samples from ``generator``. Arguments as in
        :meth:`__call__`.
        """
        model = checked(model)
        ball = self._prepare(model, x, y, target, generator)
        for _ in range(self.restarts):
            *_, x_adv = self._path(model, ball, self.steps, generator, generator)
            yield x_adv, self._score(model, x_adv, ball, generator)

    def checkpoints(self, model: torch.nn.Module, x: Tensor, y: Tensor, at: tuple[int, ...], *,
                    generator: torch.Generator | None = None,
                    start_generator: torch.Generator | None = None) -> dict[int, Tensor]:
        """The strongest restart per example after each step count in ``at`` (untargeted).

        One run of ``max(at)`` steps per restart serves every count: the iterate after k steps
        is exactly what a k-step attack with this step size returns. Random starts come from
        ``start_generator`` (``generator`` when None), so attacks with different ``n_samples``
        can share their starts (common random numbers); posterior samples and the restart
        scores come from ``generator``.

        Returns:
            ``{steps: x_adv}`` for every count in ``at``, shapes of ``x``.
        """
        if not at or min(at) < 0:
            raise ValueError(f"checkpoints need step counts >= 0, got {at}")
        model = checked(model)
        start_generator = generator if start_generator is None else start_generator
        ball = self._prepare(model, x, y, None, generator)
        best: dict[int, Tensor] = {}
        scores: dict[int, Tensor] = {}
        shape = (-1, *[1] * (ball.x0.ndim - 1))
        for _ in range(self.restarts):
            path = self._path(model, ball, max(at), generator, start_generator)
            for step, x_adv in enumerate(path):
                if step not in at:
                    continue
                if self.restarts == 1:
                    best[step] = x_adv
                    continue
                score = self._score(model, x_adv, ball, generator)
                if step not in best:
                    best[step], scores[step] = x_adv, score
                else:
                    better = (score > scores[step]).view(shape)
                    best[step] = torch.where(better, x_adv, best[step])
                    scores[step] = torch.maximum(score, scores[step])
        return {k: best[k] for k in at}

    def __call__(self, model: torch.nn.Module, x: Tensor, y: Tensor, *,
                 target: Tensor | int | None = None,
                 generator: torch.Generator | None = None) -> Tensor:
        """Return the strongest restart per example, shape of ``x``.

        Args:
            model: A registry model (``sample_logits`` contract), checked at the call.
            x: Inputs in [0, 1], shape (B, *).
            y: True labels, shape (B,).
            target: Target class, shape (B,) or one int; ``None`` = untargeted.
            generator: Source of all the attack's randomness (starts and posterior samples).
        """
        best, best_score = x.detach(), None
        for x_adv, score in self.runs(model, x, y, target=target, generator=generator):
            if best_score is None:
                best, best_score = x_adv, score
                continue
            better = (score > best_score).view(-1, *[1] * (x.ndim - 1))  # (B, 1, ...)
            best = torch.where(better, x_adv, best)
            best_score = torch.maximum(score, best_score)
        return best


@dataclasses.dataclass(frozen=True)
class _Ball:
    """What every restart of one PGD call shares: the clean input ``x0``, the fixed labels
    ``y`` or ``target``, and the box ``[lo, hi]`` (the eps-ball within [0, 1])."""

    x0: Tensor
    y: Tensor
    target: Tensor | None
    lo: Tensor
    hi: Tensor
