"""The attack contract as a test kit: ``robustbnn check --attack NAME``.

:func:`check_attack` builds a registered attack with its resolved default settings
(:func:`robustbnn.settings.attack_settings`) and runs every clause on it, as
:func:`robustbnn.testing.check_model` does for models::

    from robustbnn.testing.attack import check_attack

    def test_my_attack_keeps_the_contract():
        check_attack("my_attack").raise_if_failed()

The clauses, in order:

- ``build``: the attack builds from its defaults at each eps of its grid, with ``eps`` and
  ``n_samples`` fields and a declared norm.
- ``input_unchanged``: the attack leaves the ``x`` and ``y`` it is given as they were (an
  attack that writes into its input, ``x.mul_(0)``, is refused by name, as ``bench`` refuses it:
  :func:`robustbnn.attacks.copies.call_on_copies`).
- ``budget``: on random inputs (some pixels at 0 and 1) at up to three radii of its grid,
  every example stays in its declared norm ball around the inputs as they were, and in
  [0, 1] (:func:`robustbnn.attacks.budget.check_budget`).

Every clause calls the attack on copies of its inputs, so one clause's inputs are not what the
attack left of another's.
- ``deterministic``: equal generator states give bitwise equal ``x_adv`` (on a model whose
  logits draw noise from the generator, so an attack that ignores it is caught).
- ``no_mode_switch``: the attack never calls ``train()`` or ``eval()`` on the model
  (STYLE.md §4: a mode switch silently changes a stochastic model).
- ``beats_noise``: on a linear model trained on separable synthetic data, accuracy under the
  attack at its largest radius is lower than under random noise of the same norm (skipped
  for an attack declaring ``uses_gradient = False``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, Literal

import torch
from torch import Tensor, nn

from robustbnn.attacks.budget import check_budget
from robustbnn.attacks.copies import call_on_copies
from robustbnn.bench_config import BenchConfig
from robustbnn.errors import AttackContractError
from robustbnn.settings import AttackSettings, attack_settings

__all__ = ["ATTACK_CLAUSES", "AttackCheckReport", "AttackClauseResult", "check_attack"]

ATTACK_CLAUSES = ("build", "input_unchanged", "budget", "deterministic", "no_mode_switch",
                  "beats_noise")
"""The clauses, in the order they run and are reported."""

SHAPE = (1, 6, 7)  # one input; B = 5 and C = 2 elsewhere, so axes are distinct
N_SAMPLES = 2  # S_attack of every clause
N_POINTS = 200  # test points of beats_noise


@dataclasses.dataclass(frozen=True)
class AttackClauseResult:
    """The outcome of one clause: ``status`` is ``"ok"``, ``"failed"`` or ``"skipped"``."""

    clause: str
    status: Literal["ok", "failed", "skipped"]
    detail: str = ""


@dataclasses.dataclass(frozen=True)
class AttackCheckReport:
    """Every clause's outcome for one attack."""

    attack: str
    results: tuple[AttackClauseResult, ...]

    @property
    def ok(self) -> bool:
        """Whether no clause failed."""
        return not self.failed

    @property
    def failed(self) -> list[AttackClauseResult]:
        """The failed clauses."""
        return [r for r in self.results if r.status == "failed"]

    def lines(self) -> list[str]:
        """One line per clause: ``attack  clause ok|FAILED: what|skipped: why``."""
        text = {"ok": "ok", "failed": "FAILED: ", "skipped": "skipped: "}
        return [f"{self.attack}  {r.clause:<15} {text[r.status]}{r.detail}".rstrip()
                for r in self.results]

    def raise_if_failed(self) -> AttackCheckReport:
        """Return the report when every clause passed.

        Raises:
            AttackContractError: Naming the attack and every failed clause.
        """
        if self.failed:
            raise AttackContractError("; ".join(
                f"attack {self.attack!r}: clause {r.clause!r} failed: {r.detail}"
                for r in self.failed))
        return self


class _Linear(nn.Module):
    """A linear classifier whose logits carry a little noise from the generator, and which
    records every ``train()``/``eval()`` call."""

    def __init__(self, d: int, num_classes: int) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.linear = nn.Linear(d, num_classes)
        self.mode_calls: list[bool] = []

    def train(self, mode: bool = True) -> _Linear:
        """Record the call, then switch as torch does."""
        self.mode_calls.append(mode)
        return super().train(mode)

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        """Logits (S, B, C) with N(0, 0.01²) noise drawn from ``generator``."""
        logits = self.linear(x.flatten(1))  # (B, C)
        noise = torch.randn((n_samples, *logits.shape), generator=generator, device=x.device,
                            dtype=x.dtype)
        return logits + 0.01 * noise  # (S, B, C)


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _separable(eps: float, norm: str, n: int, seed: int) -> tuple[Tensor, Tensor]:
    """Two classes at 0.5 ± delta·u (u a random ±1 pattern): their margin is eps / 2 in
    ``norm``, so an attack within eps crosses it and random noise of norm eps rarely does."""
    d = torch.Size(SHAPE).numel()
    u = torch.randint(0, 2, (d,), generator=_gen(0)).double().mul(2).sub(1)  # one pattern
    g = _gen(seed)
    delta = min(0.4, eps / 2 if norm == "linf" else eps / 2 / d**0.5)
    y = torch.randint(0, 2, (n,), generator=g)
    x = 0.5 + delta * (2 * y.double() - 1)[:, None] * u + 0.01 * torch.randn(n, d, generator=g)
    return x.clamp(0, 1).float().view(n, *SHAPE), y


def _trained(x: Tensor, y: Tensor) -> _Linear:
    """A linear model fitted to (x, y) by 200 full-batch Adam steps."""
    model = _Linear(x[0].numel(), 2)
    with torch.no_grad():
        model.linear.weight.zero_()
        model.linear.bias.zero_()
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(200):
        opt.zero_grad()
        nn.functional.cross_entropy(model.linear(x.flatten(1)), y).backward()
        opt.step()
    model.eval()
    model.mode_calls.clear()
    return model


def _noise(x: Tensor, eps: float, norm: str, generator: torch.Generator) -> Tensor:
    """Random noise of norm exactly eps (a random sign per pixel, or a random L2 direction)."""
    z = torch.randn(x.shape, generator=generator)
    if norm == "linf":
        return (x + eps * z.sign()).clamp(0, 1)
    z = z / z.flatten(1).norm(dim=1).view(-1, *[1] * (x.ndim - 1))
    return (x + eps * z).clamp(0, 1)


def _accuracy(model: _Linear, x: Tensor, y: Tensor) -> float:
    with torch.no_grad():
        return (model.linear(x.flatten(1)).argmax(-1) == y).double().mean().item()


def _at(resolved: AttackSettings, eps: float) -> Any:
    return dataclasses.replace(resolved.attack, eps=eps, n_samples=N_SAMPLES)


def check_attack(name: str, overrides: Sequence[str] = ()) -> AttackCheckReport:
    """Build attack ``name`` from its defaults and run every clause on it.

    Args:
        name: A registered attack name (plug-ins must be imported first).
        overrides: ``--set name.field=value`` items, as ``bench`` takes them (other owners'
            are ignored).

    Returns:
        The report; call :meth:`AttackCheckReport.raise_if_failed` to fail on any broken
        clause.

    Raises:
        UnknownNameError: For an unregistered name.
    """
    results: list[AttackClauseResult] = []
    with torch.random.fork_rng(devices=[]):
        try:
            resolved = attack_settings(name, BenchConfig(overrides=tuple(overrides)))
            fields = {f.name for f in dataclasses.fields(resolved.attack)}
            missing = sorted({"eps", "n_samples"} - fields)
            if missing:
                raise ValueError(f"it has no field(s) {missing}; the harness sets eps and "
                                 "n_samples per cell")
            attacks = [_at(resolved, e) for e in resolved.eps[-3:]]
        except Exception as err:  # noqa: BLE001 - any failure to build is this clause's
            detail = f"{type(err).__name__}: {err}"
            return AttackCheckReport(name, (
                AttackClauseResult("build", "failed", detail),
                *(AttackClauseResult(c, "skipped", "the attack did not build")
                  for c in ATTACK_CLAUSES[1:])))
        results.append(AttackClauseResult("build", "ok"))
        for clause in (_input_unchanged, _budget, _deterministic, _no_mode_switch,
                       _beats_noise):
            try:
                status, detail = clause(name, resolved, attacks)
            except Exception as err:  # noqa: BLE001 - the attack's own error breaks the clause
                status, detail = "failed", f"{type(err).__name__}: {err}"
            results.append(AttackClauseResult(clause.__name__[1:], status, detail))
    return AttackCheckReport(name, tuple(results))


def _inputs(seed: int) -> tuple[Tensor, Tensor]:
    g = _gen(seed)
    x = torch.rand(5, *SHAPE, generator=g)
    x[0, 0, 0] = 0.0  # pixels on the box's faces
    x[1, 0, 0] = 1.0
    return x, torch.randint(0, 2, (5,), generator=g)


def _on_copies(attack: Any, model: nn.Module, x: Tensor, y: Tensor,
               generator: torch.Generator) -> Tensor:
    """``attack`` on copies of ``x`` and ``y``, which stay as they were."""
    return attack(model, x.clone(), y.clone(), generator=generator)


def _input_unchanged(name: str, resolved: AttackSettings,
                     attacks: list[Any]) -> tuple[str, str]:
    model = _Linear(torch.Size(SHAPE).numel(), 2)
    x, y = _inputs(11)
    try:
        call_on_copies(lambda xb, yb: attacks[-1](model, xb, yb, generator=_gen(12)), x, y,
                       attack=name)
    except AttackContractError as err:
        return "failed", str(err)
    return "ok", ""


def _budget(name: str, resolved: AttackSettings, attacks: list[Any]) -> tuple[str, str]:
    model = _Linear(torch.Size(SHAPE).numel(), 2)
    x, y = _inputs(1)
    for attack in attacks:
        x_adv = _on_copies(attack, model, x, y, _gen(2))
        check_budget(x, x_adv, attack.eps, resolved.norm, attack=name)  # around x as it was
    return "ok", ""


def _deterministic(name: str, resolved: AttackSettings, attacks: list[Any]) -> tuple[str, str]:
    model = _Linear(torch.Size(SHAPE).numel(), 2)
    x, y = _inputs(3)
    first = _on_copies(attacks[-1], model, x, y, _gen(4))
    again = _on_copies(attacks[-1], model, x, y, _gen(4))
    if not torch.equal(first, again):
        return "failed", ("equal generator states gave different x_adv: draw every random "
                          "number from the generator passed to __call__ and pass it to the "
                          "model's sample_logits")
    return "ok", ""


def _no_mode_switch(name: str, resolved: AttackSettings, attacks: list[Any]) -> tuple[str, str]:
    model = _Linear(torch.Size(SHAPE).numel(), 2)
    model.eval()
    model.mode_calls.clear()
    x, y = _inputs(5)
    _on_copies(attacks[-1], model, x, y, _gen(6))
    if model.mode_calls or model.training:
        calls = ["train()" if m else "eval()" for m in model.mode_calls]
        return "failed", (f"it called {', '.join(calls) or 'train()'} on the model: attacks "
                          "never switch modes (a stochastic model may sample differently)")
    return "ok", ""


def _beats_noise(name: str, resolved: AttackSettings, attacks: list[Any]) -> tuple[str, str]:
    if not getattr(type(resolved.attack), "uses_gradient", True):
        return "skipped", "the attack declares uses_gradient = False"
    attack = attacks[-1]
    x_train, y_train = _separable(attack.eps, resolved.norm, 400, 7)
    x, y = _separable(attack.eps, resolved.norm, N_POINTS, 8)
    model = _trained(x_train, y_train)
    clean = _accuracy(model, x, y)
    noisy = _accuracy(model, _noise(x, attack.eps, resolved.norm, _gen(9)), y)
    attacked = _accuracy(model, _on_copies(attack, model, x, y, _gen(10)).detach(), y)
    seen = (f"eps={attack.eps:g} ({resolved.norm}): accuracy clean {clean:.3f}, random noise "
            f"{noisy:.3f}, attack {attacked:.3f}")
    if attacked < noisy:
        return "ok", ""
    return "failed", f"{seen}; the attack is no stronger than random noise of its norm"
