"""Targeted iterative FGSM on the Monte Carlo predictive, recorded at checkpoints.

References:
    Li & Gal, "Dropout Inference in Bayesian Neural Networks with Alpha-divergences",
    ICML 2017, arXiv:1703.02914, §5.3 and Fig. 7 (docs/protocols.md §3.4): target class 0,
    applied to the test digits of the other classes, eta = 0.01, 100 steps, 10 MC samples,
    accuracy, target success and entropy tracked every 10 steps. Iterative FGSM: Kurakin,
    Goodfellow & Bengio, "Adversarial examples in the physical world", 2017,
    arXiv:1607.02533.

Each step is x <- clip(x + eta * sign(grad_x log p̄(target | x)), 0, 1), the gradient estimated
with ``n_samples`` posterior samples drawn fresh from the attack's generator at every step.
Li & Gal's attack is unbounded apart from the [0, 1] box, so :func:`targeted_curve` reports
the distortion; ``eps`` optionally adds an L-infinity ball.

Norm: L-infinity steps (unbounded unless ``eps`` is set). Shapes: x (B, *), y (B,),
target (B,) or int -> x_adv (B, *).

Example:
    >>> import torch
    >>> from robustbnn.models import MODELS
    >>> spec = MODELS.get("mlp")
    >>> model = spec.build(spec.config(), (1, 28, 28), 10, torch.Generator().manual_seed(0))
    >>> x, y = exclude_target(torch.rand(6, 1, 28, 28), torch.tensor([0, 1, 2, 0, 4, 5]))
    >>> attack = TargetedIFGSM(steps=20, n_samples=1)
    >>> sorted(attack.trajectory(model, x, y)), y.tolist()
    ([0, 10, 20], [1, 2, 4, 5])
    >>> curve = targeted_curve(model, x, y, attack,
    ...                        Evaluation(s_eval=2, generator=torch.Generator().manual_seed(2)),
    ...                        generator=torch.Generator().manual_seed(1))
    >>> [row["step"] for row in curve], curve[0]["linf"], round(curve[-1]["linf"], 2)
    ([0, 10, 20], 0.0, 0.2)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import ClassVar

import torch
from torch import Tensor

from robustbnn.attacks._grad import GradientSettings, as_target, mc_input_grad
from robustbnn.attacks.base import Attack
from robustbnn.attacks.budget import check_budget
from robustbnn.config import NON_NEGATIVE, POSITIVE_INT, OneOf, Range
from robustbnn.contract.checked import checked
from robustbnn.contract.predict import Evaluation, chunk_rows
from robustbnn.ood import all_measures, builtin_measures

__all__ = ["TargetedIFGSM", "exclude_target", "targeted_curve"]


@dataclasses.dataclass(frozen=True)
class TargetedIFGSM(Attack):
    """Targeted iterative FGSM: ascend log p̄(target | x) by signed steps inside [0, 1].

    Attributes:
        step_size: eta, the L-infinity size of each step (Li & Gal: 0.01).
        steps: Number of steps (Li & Gal code: 100).
        n_samples: S_attack, fresh posterior samples per step (Li & Gal: 10).
        objective: ``"predictive"``, log p̄(target) (Li & Gal), or ``"expected"``,
            mean_s log p_s(target) (EOT).
        target_class: The target when ``target`` is not passed (Li & Gal: 0).
        eps: Optional L-infinity radius around the clean input; ``None`` = unbounded (paper).
        checkpoint_every: Record x_adv every this many steps (and at step 0 and the last).
    """

    step_size: float = 0.01
    steps: int = 100
    n_samples: int = 10
    objective: str = "predictive"
    target_class: int = 0
    eps: float | None = None
    checkpoint_every: int = 10

    norm: ClassVar[str] = "linf"
    reference: ClassVar[str] = "Li & Gal 2017, arXiv:1703.02914; Kurakin et al. 2017"
    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "step_size": NON_NEGATIVE, "steps": NON_NEGATIVE, "n_samples": POSITIVE_INT,
        "objective": OneOf(("predictive", "expected")), "checkpoint_every": POSITIVE_INT}

    def __post_init__(self) -> None:
        if self.steps < 0 or self.checkpoint_every < 1 or self.n_samples < 1:
            raise ValueError(f"need steps >= 0, checkpoint_every >= 1 and n_samples >= 1, got "
                             f"{self.steps}, {self.checkpoint_every}, {self.n_samples}")

    def checkpoints(self) -> list[int]:
        """Steps at which x_adv is recorded: 0, k, 2k, ... and always the last step."""
        return sorted({*range(0, self.steps + 1, self.checkpoint_every), self.steps})

    @property
    def gradient(self) -> GradientSettings:
        """The MC gradient of every step (S_attack and the objective; targeted, no label)."""
        return GradientSettings(self.n_samples, self.objective)

    def iterate(self, model: torch.nn.Module, x: Tensor, y: Tensor, *,
                target: Tensor | int | None = None,
                generator: torch.Generator | None = None) -> Iterator[tuple[int, Tensor]]:
        """Yield ``(step, x_adv)`` at every checkpoint, step 0 being the clean input.

        Lazily, so a caller can evaluate (and free) one checkpoint before the next is made.
        Arguments as in :meth:`__call__`.
        """
        gradient = self.gradient  # checks the objective first
        model = checked(model)
        target = as_target(self.target_class if target is None else target, x)
        marks = set(self.checkpoints())
        x0 = x.detach()
        x_adv = x0
        if 0 in marks:
            yield 0, x_adv
        for step in range(1, self.steps + 1):
            grad = mc_input_grad(model, x_adv, y, gradient, target=target, generator=generator)
            x_adv = x_adv + self.step_size * grad.sign()
            if self.eps is not None:
                x_adv = torch.minimum(torch.maximum(x_adv, x0 - self.eps), x0 + self.eps)
            x_adv = x_adv.clamp(0.0, 1.0)
            if step in marks:
                yield step, x_adv

    def trajectory(self, model: torch.nn.Module, x: Tensor, y: Tensor, *,
                   target: Tensor | int | None = None,
                   generator: torch.Generator | None = None) -> dict[int, Tensor]:
        """``{step: x_adv}`` at every checkpoint (see :meth:`iterate`)."""
        return dict(self.iterate(model, x, y, target=target, generator=generator))

    def __call__(self, model: torch.nn.Module, x: Tensor, y: Tensor, *,
                 target: Tensor | int | None = None,
                 generator: torch.Generator | None = None) -> Tensor:
        """Return the adversarial inputs after the last step, shape of ``x``.

        Args:
            model: A registry model (``sample_logits`` contract), checked at the call.
            x: Inputs in [0, 1], shape (B, *).
            y: True labels, shape (B,) (unused by the gradient; kept for the common API).
            target: Target class, shape (B,) or one int; ``None`` = ``target_class``.
            generator: Source of the attack's posterior samples.
        """
        x_adv = x.detach()
        for _, last in self.iterate(model, x, y, target=target, generator=generator):
            x_adv = last  # only the final iterate is returned
        return x_adv


def exclude_target(x: Tensor, y: Tensor, target_class: int = 0) -> tuple[Tensor, Tensor]:
    """The examples whose label is not ``target_class`` (Li & Gal: the 9,020 non-zero digits).

    Returns:
        ``(x[y != target_class], y[y != target_class])``.
    """
    keep = y != target_class
    return x[keep], y[keep]


def targeted_curve(model: torch.nn.Module, x: Tensor, y: Tensor, attack: TargetedIFGSM,
                   evaluation: Evaluation, *, generator: torch.Generator | None,
                   per_example: dict[int, dict[str, Tensor]] | None = None,
                   ) -> list[dict[str, float]]:
    """Run ``attack`` and evaluate every checkpoint with fresh samples (Li & Gal Fig. 7).

    The attack draws only from ``generator``; every evaluation draws ``evaluation.s_eval``
    samples only from ``evaluation.generator`` (docs/pitfalls.md §1.3). Examples are attacked in
    chunks whose gradient pass fits ``evaluation.memory_mb``
    (:func:`~robustbnn.contract.predict.chunk_rows` with ``grad=True``, divided by
    S_attack), as the bench chunks every attack.

    Args:
        model: A registry model, checked at the call.
        x: Inputs in [0, 1], shape (B, *), usually :func:`exclude_target` of the test set.
        y: True labels, shape (B,).
        attack: The targeted attack; its ``target_class`` is every example's target.
        evaluation: S_eval, the evaluation's stream and the memory budget.
        generator: Source of the attack's samples.
        per_example: When given, filled per checkpoint step with the per-example
            ``accuracy`` and ``target_success`` (0/1, shape (B,)) behind its means.

    Returns:
        One dict per checkpoint, in step order: ``step``; ``accuracy`` (argmax p̄ = y);
        ``target_success`` (argmax p̄ = target); the mean of every built-in
        probability measure (``robustbnn.ood.builtin_measures(logits=False)``) under its name;
        ``linf`` and ``l2``, the mean per-example
        distortion from ``x``; and ``n``, the number of examples.
    """
    model = checked(model)
    target = as_target(attack.target_class, x)
    batch = max(1, chunk_rows(model, evaluation.memory_mb, grad=True) // attack.n_samples)
    per_step: dict[int, dict[str, list[Tensor]]] = {}
    for start in range(0, x.shape[0], batch):
        xb, yb, tb = (t[start : start + batch] for t in (x, y, target))
        for step, x_adv in attack.iterate(model, xb, yb, target=tb, generator=generator):
            # No eps-ball (Li & Gal's targeted walk); every step must stay in the [0, 1] box.
            check_budget(xb, x_adv, None, "linf", attack="targeted_ifgsm")
            probs = evaluation.probs(model, x_adv)
            pred = probs.mean(0).argmax(-1)  # (B,)
            delta = (x_adv - xb).flatten(1)  # (B, D)
            cols = {"accuracy": (pred == yb).double(), "target_success": (pred == tb).double()}
            scores = all_measures(probs, names=builtin_measures(logits=False))
            cols |= {m: u.double() for m, u in scores.items()}
            cols |= {"linf": delta.abs().amax(1).double(), "l2": delta.norm(dim=1).double()}
            for key, value in cols.items():
                per_step.setdefault(step, {}).setdefault(key, []).append(value.detach().cpu())
    rows = []
    for step in sorted(per_step):
        row: dict[str, float] = {"step": step}
        row |= {k: float(torch.cat(v).mean()) for k, v in per_step[step].items()}
        row["n"] = x.shape[0]
        rows.append(row)
        if per_example is not None:
            per_example[step] = {k: torch.cat(per_step[step][k])
                                 for k in ("accuracy", "target_success")}
    return rows
