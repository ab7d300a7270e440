"""What an attack declares: its norm, its own eps grid, its settings and their ranges.

An attack is a frozen dataclass of hyper-parameters deriving from :class:`Attack`, called as
``attack(model, x, y, *, generator=None) -> x_adv`` (torchattacks' ``Attack`` base class, minus
its mode switching: STYLE.md §4). The dataclass fields are its settings: ``eps`` (the radius)
and ``n_samples`` (S_attack) come from the cell, every other field from the attack's defaults
and ``--set NAME.field=value``, type- and range-checked as model configs are
(:func:`robustbnn.config.replace_checked`). The harness checks every batch it gets back
against ``norm`` and ``eps`` (:func:`robustbnn.attacks.budget.check_budget`).

Example:
    >>> import dataclasses
    >>> from robustbnn.config import POSITIVE_INT, Range
    >>> @dataclasses.dataclass(frozen=True)
    ... class Noise(Attack):
    ...     eps: float = 0.5
    ...     n_samples: int = 1
    ...     tries: int = 3
    ...     norm: ClassVar[str] = "l2"
    ...     eps_grid: ClassVar[tuple[float, ...]] = (0.5, 1.0)
    ...     ranges: ClassVar[dict[str, Range]] = {"tries": POSITIVE_INT}
    >>> attack_norm(Noise), settings_of(Noise(tries=5))
    ('l2', {'tries': 5})
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from robustbnn.config import NON_NEGATIVE, POSITIVE_INT, OneOf, Range
from robustbnn.results.names import NORMS

__all__ = ["CELL_FIELDS", "Attack", "attack_norm", "eps_grid_of", "settings_of"]

CELL_FIELDS = ("eps", "n_samples")
"""Fields every cell sets itself (its radius and S_attack); the others are settings."""


class Attack:
    """Base of an attack dataclass: declare these class attributes (``ClassVar``s).

    Attributes:
        norm: ``"linf"`` or ``"l2"``: the ball ``eps`` is a radius of.
        eps_grid: The radii a bench runs it at (``--set NAME.eps=(...)`` replaces them);
            ``()`` = the suite's ``pgd_eps``.
        ranges: Allowed values of its settings (:class:`~robustbnn.config.Range`,
            :class:`~robustbnn.config.OneOf`), checked by ``--set`` and the bench.
        reference: The paper it implements, for the leaderboard legend.
        uses_gradient: Whether ``robustbnn check --attack`` expects it to beat random noise
            of the same norm on a trained model.
    """

    norm: ClassVar[str] = "linf"
    eps_grid: ClassVar[tuple[float, ...]] = ()
    ranges: ClassVar[dict[str, Range | OneOf]] = {"eps": NON_NEGATIVE, "n_samples": POSITIVE_INT}
    reference: ClassVar[str] = ""
    uses_gradient: ClassVar[bool] = True


def attack_norm(cls: type) -> str:
    """The norm ``cls`` declares (``"linf"`` for an attack that declares none, as before).

    Raises:
        ValueError: For a norm outside :data:`robustbnn.results.names.NORMS`.
    """
    norm = getattr(cls, "norm", "linf")
    if norm not in NORMS:
        raise ValueError(f"attack {cls.__name__} declares norm {norm!r}; "
                         f"declare one of {list(NORMS)}")
    return norm


def eps_grid_of(cls: type, default: tuple[float, ...]) -> tuple[float, ...]:
    """The attack's own eps grid, or ``default`` (the suite's) when it declares none."""
    return tuple(float(e) for e in getattr(cls, "eps_grid", ()) or default)


def settings_of(attack: Any) -> dict[str, Any]:
    """An attack's settings: its dataclass fields but ``eps`` and ``n_samples``."""
    return {f.name: getattr(attack, f.name) for f in dataclasses.fields(attack)
            if f.name not in CELL_FIELDS}
