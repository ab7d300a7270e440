"""Frozen configuration dataclasses and the typed, range-checked ``--set name.field=value``.

A config dataclass states the allowed values of its fields in a ``ranges`` class attribute
(``ClassVar[dict[str, Range | OneOf]]``, merged along the class hierarchy, so a model config
inherits :class:`TrainConfig`'s). A choice may need other fields in a range of their own
(:attr:`OneOf.needs`: init ``"uniform"`` needs ``init_scale > 0``). :func:`replace_checked`
checks a value's type and range, and :func:`check_config` every field of a finished config
and what its choices need, so ``--set`` values, suites, shrink budgets and plug-in defaults
are all refused before any training.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import types
import typing
from typing import Any, ClassVar, TypeVar

from robustbnn.errors import ConfigError

C = TypeVar("C")


@dataclasses.dataclass(frozen=True)
class Range:
    """The allowed interval of a number (of every item, for a tuple field).

    Example:
        >>> str(Range(0, 1, high_open=True)), Range(0, 1, high_open=True).allows(1.0)
        ('in [0, 1)', False)
    """

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def allows(self, value: Any) -> bool:
        """Whether ``value`` (a number, or a tuple of numbers) lies in the interval."""
        if isinstance(value, tuple):
            return all(self.allows(v) for v in value)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return True  # the type check speaks for non-numbers
        if value != value:  # NaN is in no interval
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return self.high is None or (value < self.high if self.high_open else value <= self.high)

    def __str__(self) -> str:
        low, high = _number(self.low), _number(self.high)
        if self.high is None:
            return f"{'>' if self.low_open else '>='} {low}"
        if self.low is None:
            return f"{'<' if self.high_open else '<='} {high}"
        return (f"in {'(' if self.low_open else '['}{low}, {high}"
                f"{')' if self.high_open else ']'}")


def _number(x: float | None) -> str:
    return str(x) if isinstance(x, int) or x is None else f"{x:g}"


@dataclasses.dataclass(frozen=True)
class OneOf:
    """The allowed values of a string field, and what each choice needs of other fields.

    ``needs`` holds ``(choice, field, allowed)`` triples: with this field at ``choice``,
    ``field`` must be ``allowed``. :func:`check_config` checks them on the finished config,
    so two ``--set`` items may come in either order.

    Example:
        >>> init = OneOf(("torch", "uniform"), needs=(("uniform", "init_scale", Range(0.1)),))
        >>> [(f, str(a)) for f, a in init.needs_of("uniform")]
        [('init_scale', '>= 0.1')]
    """

    choices: tuple[str, ...]
    needs: tuple[tuple[str, str, Range | OneOf], ...] = ()

    def needs_of(self, choice: Any) -> list[tuple[str, Range | OneOf]]:
        """The ``(field, allowed)`` pairs that ``choice`` needs."""
        return [(field, allowed) for c, field, allowed in self.needs if c == choice]

    def allows(self, value: Any) -> bool:
        """Whether ``value`` is one of the choices."""
        return value in self.choices

    def __str__(self) -> str:
        return f"one of {list(self.choices)}"


POSITIVE_INT = Range(1)  # counts: epochs, batch sizes, samples, units
# The most epochs a run may train: the papers train 100-600 (docs/protocols.md), and 10,000
# epochs of the smallest default model on MNIST 5k take hours on a CPU. Widths and depths are
# bounded by the memory the model would take (robustbnn.bench_config.check_model_memory).
MAX_EPOCHS = 10_000
EPOCHS = Range(1, MAX_EPOCHS)
NON_NEGATIVE = Range(0)
POSITIVE = Range(0, low_open=True)
PROBABILITY = Range(0, 1)
DROP_RATE = Range(0, 1, high_open=True)  # a dropout rate of 1 drops every unit


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Training hyper-parameters shared by every model (each model config extends this).

    Defaults follow the BHN protocol (docs/protocols.md §1.3): Adam with its default step size and
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

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "epochs": EPOCHS, "batch_size": POSITIVE_INT, "lr": POSITIVE,
        "optimizer": OneOf(("adam", "sgd")), "weight_decay": NON_NEGATIVE,
        "grad_clip_norm": NON_NEGATIVE, "grad_clip_value": NON_NEGATIVE,
        "val_samples": POSITIVE_INT, "selection": OneOf(("best_val", "last")),
        "lr_decay": POSITIVE,
    }


def field_ranges(cls: type) -> dict[str, Range | OneOf]:
    """The ``ranges`` of a config class and its bases (a subclass's entry wins)."""
    out: dict[str, Range | OneOf] = {}
    for klass in reversed(cls.__mro__):
        out.update(vars(klass).get("ranges", {}))
    return out


# ``dataclasses.field(default=..., metadata=ADDED_LATER)``: a setting added after cache keys and
# cell ids existed, whose default is the behaviour from before. config_identity leaves it out
# while it holds that default, so every earlier key and id stays valid.
ADDED_LATER = types.MappingProxyType({"identity": "omit_at_default"})


def config_identity(cfg: Any) -> dict[str, Any]:
    """``dataclasses.asdict(cfg)`` as cache keys and cell ids hash it: without the
    :data:`ADDED_LATER` fields that hold their default.

    Args:
        cfg: A config dataclass instance.

    Returns:
        Its fields as a dict.
    """
    out = dataclasses.asdict(cfg)
    for f in dataclasses.fields(cfg):
        if f.metadata.get("identity") == "omit_at_default" and getattr(cfg, f.name) == f.default:
            del out[f.name]
    return out


def _check_range(cls: type, field: str, value: Any, owner: str) -> None:
    """Raise :class:`ConfigError` naming owner, field, value and range when out of range."""
    allowed = field_ranges(cls).get(field)
    if allowed is not None and not allowed.allows(value):
        raise ConfigError(f"{owner}.{field}={value!r} is out of range: {field} must be "
                          f"{allowed}{' (each item)' if isinstance(value, tuple) else ''}; "
                          f"set another value with --set {owner.split()[0]}.{field}=...")


def check_config(cfg: Any, *, owner: str) -> Any:
    """Check every field of the config dataclass ``cfg`` against its ``ranges``.

    Args:
        cfg: A config dataclass instance (a model's, after shrink and overrides).
        owner: The name shown in errors (the model's registry name).

    Returns:
        ``cfg`` unchanged.

    Raises:
        ConfigError: Naming the model, the field, the value and the allowed range.

    Example:
        >>> check_config(TrainConfig(), owner="mlp").epochs
        50
    """
    for f in dataclasses.fields(cfg):
        _check_range(type(cfg), f.name, getattr(cfg, f.name), owner)
    for field, allowed in field_ranges(type(cfg)).items():
        if isinstance(allowed, OneOf) and hasattr(cfg, field):
            _check_needs(cfg, field, allowed, owner)
    return cfg


def _check_needs(cfg: Any, field: str, allowed: OneOf, owner: str) -> None:
    """Raise :class:`ConfigError` when ``cfg.field``'s choice needs another field elsewhere."""
    value = getattr(cfg, field)
    for other, need in allowed.needs_of(value):
        got = getattr(cfg, other)
        if not need.allows(got):
            model = owner.split()[0]
            raise ConfigError(f"{owner}.{field}={value!r} needs {other} {need}, got "
                              f"{model}.{other}={got!r}; set it with --set {model}.{other}=..., "
                              f"or choose another {field}: {allowed}")


def check_type(value: Any, annotation: Any, where: str) -> Any:
    """Check ``value`` against an annotation; allow int -> float, list -> tuple, value -> enum.

    Raises:
        ConfigError: Naming ``where``, the expected type and the value.
    """
    origin = typing.get_origin(annotation)
    if annotation is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        for arm in typing.get_args(annotation):
            try:
                return check_type(value, arm, where)
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
        if args and args[-1] is not Ellipsis:  # a fixed-length tuple such as tuple[str, int]
            if len(value) != len(args):
                raise ConfigError(f"{where}: expected {len(args)} items, got {value!r}")
            return tuple(check_type(v, a, where) for v, a in zip(value, args, strict=True))
        item = args[0] if args else Any
        return tuple(check_type(v, item, where) for v in value)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        if value not in (known := [m.value for m in annotation]):  # a member equals its value
            raise ConfigError(f"{where}: unknown {value!r}; known: {known}")
        return annotation(value)
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
        ConfigError: Unknown field (lists the known ones), a value of the wrong type, or one
            outside the field's range.

    Example:
        >>> override(TrainConfig(), "epochs", "3", owner="mlp").epochs
        3
    """
    return replace_checked(cfg, field, literal(text, where=f"{owner}.{field}"), owner=owner)


def literal(text: str, *, where: str = "--set") -> Any:
    """The Python literal in ``text`` (``ast.literal_eval``); bare words are strings.

    Args:
        text: The value as typed.
        where: The setting it is for, in errors.

    Raises:
        ConfigError: When ``text`` holds a digit other than ASCII 0-9 (``٣``, ``３``): Python
            reads those as numbers in ``int()`` but not in a literal, so the value would be a
            string that looks like a number.

    Example:
        >>> literal("(1, 2)"), literal("adam")
        ((1, 2), 'adam')
    """
    if any(ch.isdigit() and not ch.isascii() for ch in text):
        raise ConfigError(f"{where}: {text!r} has digits other than the ASCII 0-9, which are "
                          "no number here; write it with 0-9")
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text  # bare words such as relu or adam are strings


def replace_checked(cfg: C, field: str, value: Any, *, owner: str) -> C:
    """Return ``cfg`` with ``field`` set to ``value``, type-checked as :func:`override` does.

    Raises:
        ConfigError: Unknown field (lists the known ones), a value of the wrong type, or one
            outside the field's range (:func:`check_config`).
    """
    fields = {f.name for f in dataclasses.fields(cfg)}  # type: ignore[arg-type]
    if field not in fields:
        raise ConfigError(f"{owner} has no setting {field!r}; known: {sorted(fields)}")
    hints = typing.get_type_hints(type(cfg))
    try:
        value = check_type(value, hints[field], f"{owner}.{field}")
    except ConfigError as err:
        raise ConfigError(f"{err}; give a value of its type, like the current "
                          f"{getattr(cfg, field)!r}") from None
    _check_range(type(cfg), field, value, owner)
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
