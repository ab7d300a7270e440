"""Frozen configuration dataclasses and the typed ``--set name.field=value`` override."""

from __future__ import annotations

import ast
import dataclasses
import types
import typing
from typing import Any, TypeVar

from robustbnn.errors import ConfigError

C = TypeVar("C")


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Training hyper-parameters shared by every model (each model config extends this).

    Defaults follow the BHN protocol (PROTOCOLS.md §1.3): Adam with its default step size and
    minibatches of 128; model selection by validation accuracy with 20 MC samples per epoch.
    """

    epochs: int = 50  # budget of the default suite on mnist5k; paper runs use 100-600
    batch_size: int = 128  # BHN §4 [SEED], BbB §5.1, Li & Gal code
    lr: float = 1e-3  # Adam default [SEED BHN §4]
    optimizer: str = "adam"  # "adam" or "sgd" (Li & Gal code trains with plain SGD, lr 0.01)
    weight_decay: float = 0.0  # L2 coupled into the optimiser update; BHN AD baselines use 1e-5
    grad_clip_norm: float = 0.0  # total-norm clipping, 0 = off; BHN Base_BHN uses 10
    grad_clip_value: float = 0.0  # elementwise clip after the norm clip, 0 = off; BHN uses 5
    val_samples: int = 20  # MC samples for the per-epoch validation accuracy [CODE BHN]
    # Which epoch's weights are kept: "best_val" (the BHN code's best validation accuracy) or
    # "last" (the Bayes by Backprop tutorial and Li & Gal's code, which select nothing).
    selection: str = "best_val"
    lr_decay: float = 1.0  # lr falls by this factor over training, lr0·decay^(−e/(E−1));
    # 1 = constant (paper default); 10 = the BHN code's optional ``lr0·10^(−e/(E−1))`` [CODE]


def _coerce(value: Any, annotation: Any, where: str) -> Any:
    """Check ``value`` against a dataclass field annotation; allow int -> float and list -> tuple."""
    origin = typing.get_origin(annotation)
    if annotation is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        for arm in typing.get_args(annotation):
            try:
                return _coerce(value, arm, where)
            except ConfigError:
                continue
        raise ConfigError(f"{where}: {value!r} does not match type {annotation}")
    if annotation is type(None):
        if value is None:
            return None
        raise ConfigError(f"{where}: expected None, got {value!r}")
    if origin is tuple:
        if not isinstance(value, (tuple, list)):
            raise ConfigError(f"{where}: expected a tuple like (400, 400), got {value!r}")
        args = typing.get_args(annotation)
        item = args[0] if args else Any
        return tuple(_coerce(v, item, where) for v in value)
    if annotation is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if annotation is bool and not isinstance(value, bool):
        raise ConfigError(f"{where}: expected True or False, got {value!r}")
    if isinstance(annotation, type) and not isinstance(value, annotation):
        raise ConfigError(f"{where}: expected {annotation.__name__}, got {value!r}")
    if annotation is int and isinstance(value, bool):
        raise ConfigError(f"{where}: expected int, got {value!r}")
    return value


def override(cfg: C, field: str, text: str, *, owner: str) -> C:
    """Return ``cfg`` with ``field`` set to the Python literal in ``text``, type-checked.

    Args:
        cfg: A frozen dataclass instance.
        field: The field name.
        text: A Python literal (parsed with ``ast.literal_eval``; bare words are strings).
        owner: The name shown in errors (e.g. the model name).

    Raises:
        ConfigError: Unknown field (lists the known ones) or a value of the wrong type.

    Example:
        >>> override(TrainConfig(), "epochs", "3", owner="mlp").epochs
        3
    """
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = text  # bare words such as relu or adam are strings
    return replace_checked(cfg, field, value, owner=owner)


def replace_checked(cfg: C, field: str, value: Any, *, owner: str) -> C:
    """Return ``cfg`` with ``field`` set to ``value``, type-checked as :func:`override` does.

    Raises:
        ConfigError: Unknown field (lists the known ones) or a value of the wrong type.
    """
    fields = {f.name for f in dataclasses.fields(cfg)}  # type: ignore[arg-type]
    if field not in fields:
        raise ConfigError(f"{owner} has no setting {field!r}; known: {sorted(fields)}")
    hints = typing.get_type_hints(type(cfg))
    value = _coerce(value, hints[field], f"{owner}.{field}")
    return dataclasses.replace(cfg, **{field: value})  # type: ignore[type-var]


def parse_set(items: list[str]) -> list[tuple[str, str, str]]:
    """Split ``--set owner.field=value`` strings into (owner, field, value) triples.

    Raises:
        ConfigError: When an item is not of the form ``owner.field=value``.
    """
    out = []
    for item in items:
        key, sep, value = item.partition("=")
        owner, dot, field = key.strip().partition(".")
        if not sep or not dot or not owner or not field:
            raise ConfigError(
                f"--set {item!r} is not of the form name.field=value (e.g. mlp.epochs=10)"
            )
        out.append((owner, field, value.strip()))
    return out
