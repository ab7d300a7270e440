"""``--set`` resolved once: typed per-model and per-attack configs for a whole run.

A run's ``--set owner.field=value`` strings (``BenchConfig.overrides``) are parsed here once,
in :func:`resolve_settings`, into a frozen :class:`Settings` record that the plan and every
worker read (it travels in :class:`robustbnn.run.context.RunSpec`); nothing downstream
re-applies the strings. An owner is a model (``*`` = every model with the field, as before)
or an attack; the values get the same type and range checks (:mod:`robustbnn.config`).

An attack's settings are its dataclass fields (:mod:`robustbnn.attacks.base`): PGD's default
to the suite's ``pgd_*`` fields and ``attack_label``, so a run without ``--set pgd.…`` has
exactly its former cells; ``NAME.eps=(...)`` and ``NAME.n_samples=(...)`` replace the eps and
S_attack grids of its cells. FGSM and the targeted attack take theirs from the suite's fields.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import logging
from typing import Any

from robustbnn.attacks import ATTACKS
from robustbnn.attacks.base import attack_norm, eps_grid_of, settings_of
from robustbnn.bench_config import BenchConfig, check_samples
from robustbnn.config import (
    NON_NEGATIVE,
    POSITIVE_INT,
    Range,
    check_config,
    check_type,
    literal,
    override,
    parse_set,
    replace_checked,
)
from robustbnn.errors import ConfigError
from robustbnn.models import MODELS

__all__ = ["AttackSettings", "Settings", "SuiteAttack", "attack_settings", "check_owners",
           "model_config", "resolve_settings"]

log = logging.getLogger(__name__)


class SuiteAttack(enum.StrEnum):
    """The attacks whose settings are the suite's fields (not ``--set``) and whose cells have
    kinds of their own (``fgsm`` and ``sanity``, ``targeted``); any other registered attack
    runs as ``attack`` cells with its resolved :class:`AttackSettings`."""

    FGSM = "fgsm"
    TARGETED_IFGSM = "targeted_ifgsm"


GRIDS = {"eps": (tuple[float, ...], NON_NEGATIVE), "n_samples": (tuple[int, ...], POSITIVE_INT)}


@dataclasses.dataclass(frozen=True)
class AttackSettings:
    """One attack's resolved settings.

    Attributes:
        name: Its registry name.
        attack: An instance with every setting resolved; each cell replaces ``eps`` and
            ``n_samples`` (when the attack has them) with its own.
        eps: The radii of its cells, in ``norm``.
        s_attack: The S_attack values of its cells.
        norm: ``"linf"`` or ``"l2"``.
    """

    name: str
    attack: Any
    eps: tuple[float, ...]
    s_attack: tuple[int, ...]
    norm: str

    @property
    def settings(self) -> dict[str, Any]:
        """The attack's settings (its fields but ``eps`` and ``n_samples``)."""
        return settings_of(self.attack)


def _named(pairs: tuple[tuple[str, Any], ...], kind: str, name: str) -> Any:
    """The value paired with ``name`` in ``pairs`` (a run's models or attacks).

    Args:
        pairs: ``(name, value)`` pairs of one kind, in the run's order.
        kind: ``"model"`` or ``"attack"``: names the error and its ``--<kind>s`` flag.
        name: The name to look up.

    Raises:
        ConfigError: When the run does not have ``name``.
    """
    found = dict(pairs).get(name)
    if found is None:
        raise ConfigError(f"{kind} {name!r} is not one of this run's {kind}s "
                          f"{[m for m, _ in pairs]}; add it with --{kind}s")
    return found


@dataclasses.dataclass(frozen=True)
class Settings:
    """Every model's and attack's resolved config for one run (picklable, hashable).

    Attributes:
        models: ``(name, config)`` per model of the run (held-out models included).
        attacks: ``(name, AttackSettings)`` per attack of the run but FGSM and the targeted
            attack.
    """

    models: tuple[tuple[str, Any], ...] = ()
    attacks: tuple[tuple[str, AttackSettings], ...] = ()

    def model(self, name: str) -> Any:
        """The resolved config of model ``name``.

        Raises:
            ConfigError: When the run does not have the model.
        """
        return _named(self.models, "model", name)

    def attack(self, name: str) -> AttackSettings:
        """The resolved settings of attack ``name``.

        Raises:
            ConfigError: When the run does not have the attack.
        """
        return _named(self.attacks, "attack", name)

    def to_json(self) -> dict[str, Any]:
        """Model and attack configs as JSON data (``--print-config``)."""
        return {"model_configs": {m: dataclasses.asdict(c) for m, c in self.models},
                "attack_configs": {a: {"norm": s.norm, "eps": list(s.eps),
                                       "S_attack": list(s.s_attack), **s.settings}
                                   for a, s in self.attacks}}


def model_config(name: str, overrides: tuple[str, ...] | list[str], shrink: str = "") -> Any:
    """The model's default config, shrunk to the ``shrink`` budget its spec declares, with
    ``name.field=value`` / ``*.field=value`` applied after, every field range-checked.

    The one resolver of model configs: :func:`resolve_settings` calls it for a run, and a
    reproduction rebuilds its declared runs' configs with it (reports read ``run.json``).

    Raises:
        ConfigError: A value of the wrong type or out of its field's range, naming the model,
            the field, the value and the allowed range.
    """
    spec = MODELS.get(name)
    cfg = spec.config()
    if shrink:
        declared = spec.shrink.get(shrink)
        if declared is None:
            _warn_once(name, shrink)
        for field, value in (declared or {}).items():
            cfg = replace_checked(cfg, field, value, owner=f"{name} (its {shrink!r} shrink)")
    fields = {f.name for f in dataclasses.fields(cfg)}
    for owner, field, value in parse_set(list(overrides)):
        if owner == name or (owner == "*" and field in fields):
            cfg = override(cfg, field, value, owner=name)
    return check_config(cfg, owner=name)  # defaults and shrink budgets too, before any work


@functools.cache
def _warn_once(name: str, shrink: str) -> None:
    log.warning("model %s declares no %r budget in its ModelSpec.shrink, so it runs at its "
                "default size; declare one (e.g. shrink={%r: {'epochs': 2}})", name, shrink,
                shrink)


def attack_settings(name: str, cfg: BenchConfig) -> AttackSettings:
    """Attack ``name``'s settings for a run of ``cfg``: its defaults (PGD's from the suite's
    ``pgd_*`` fields), then ``--set name.field=value`` items, type- and range-checked.

    Raises:
        ConfigError: An unknown setting (listing the known ones), a value of the wrong type
            or out of its range, naming the attack, the field and the value.
    """
    cls = ATTACKS.get(name)
    if not dataclasses.is_dataclass(cls):
        raise ConfigError(f"attack {name!r} ({cls.__name__}) is not a dataclass; declare it "
                          "as a frozen dataclass of its settings (robustbnn.attacks.base)")
    norm = attack_norm(cls)
    grids: dict[str, tuple] = {"eps": eps_grid_of(cls, cfg.pgd_eps),
                               "n_samples": tuple(cfg.pgd_s_attack)}
    fields = {f.name for f in dataclasses.fields(cls)}
    given = {k: g[0] for k, g in grids.items() if k in fields and g}
    if name == "pgd":  # today's cells: the suite's fields
        given |= {"steps": cfg.pgd_steps, "step_size": cfg.pgd_step_size,
                  "restarts": cfg.pgd_restarts, "objective": cfg.pgd_objective,
                  "label": cfg.attack_label}
    try:
        attack = cls(**given)
    except (TypeError, ValueError) as err:
        raise ConfigError(f"attack {name!r} cannot be built from its defaults ({err}); give "
                          "every field a default") from None
    for owner, field, text in parse_set(list(cfg.overrides)):
        if owner != name:
            continue
        if field in GRIDS:
            grids[field] = _grid(name, field, literal(text))
            continue
        attack = replace_checked(attack, field, literal(text), owner=name)
    attack = check_config(attack, owner=name)
    check_samples(f"{name}.n_samples", tuple(grids["n_samples"]), cfg.memory_mb, grad=True,
                  fix=f"set fewer with --set {name}.n_samples=...")
    return AttackSettings(name, attack, tuple(grids["eps"]), tuple(grids["n_samples"]), norm)


def _grid(name: str, field: str, value: Any) -> tuple:
    """A ``--set NAME.eps=...`` or ``NAME.n_samples=...`` grid, type- and range-checked."""
    annotation, allowed = GRIDS[field]
    if not isinstance(value, tuple | list):
        value = (value,)
    where = f"{name}.{field}"
    value = check_type(value, annotation, where)
    if not value or not Range.allows(allowed, value):
        raise ConfigError(f"{where}={value!r} is out of range: {field} must be a non-empty "
                          f"tuple, each item {allowed}; set another value with --set "
                          f"{where}=...")
    return value


def check_owners(cfg: BenchConfig, user: tuple[str, ...] = ()) -> None:
    """Every ``--set`` owner must be a registered model or attack (one of the run's for user
    sets); a ``*.field`` must name a field of at least one of the run's models.

    Raises:
        ConfigError: Naming the owner and the known models and attacks, or the fix.
    """
    for owner, field, _ in parse_set(list(cfg.overrides)):
        _known_owner(owner, field)
    for owner, field, _ in parse_set(list(user)):
        kind = _known_owner(owner, field)
        if kind == "model" and owner not in cfg.models:
            raise ConfigError(f"--set {owner}.…: model {owner!r} is not in this run's models "
                              f"{list(cfg.models)}; add it with --models")
        if kind == "attack" and owner not in cfg.attacks:
            raise ConfigError(f"--set {owner}.…: attack {owner!r} is not in this run's attacks "
                              f"{list(cfg.attacks)}; add it with --attacks")
        if owner == "*":
            known = {f.name for m in cfg.models for f in dataclasses.fields(MODELS.get(m).config)}
            if field not in known:
                raise ConfigError(f"--set *.{field}: no model of this run has a setting "
                                  f"{field!r}; known: {sorted(known)}")


def _known_owner(owner: str, field: str) -> str:
    """``"model"``, ``"attack"`` or ``"*"`` for a ``--set`` owner, else a ConfigError."""
    if owner == "*":
        return "*"
    if owner in MODELS.names():
        return "model"
    if owner in tuple(SuiteAttack):
        raise ConfigError(f"--set {owner}.{field}: {owner} takes its settings from the suite's "
                          "fields (eps, s_attack, attack_objective, attack_label, attack_clip, "
                          "targeted_*; see --print-config), not from --set")
    if owner in ATTACKS.names():
        return "attack"
    raise ConfigError(f"--set {owner}.{field}: unknown model or attack {owner!r}; known models: "
                      f"{sorted(MODELS.names())}; known attacks: {sorted(ATTACKS.names())}")


def resolve_settings(cfg: BenchConfig) -> Settings:
    """Parse ``cfg.overrides`` once into every model's and attack's typed config.

    Args:
        cfg: The run's config, its models resolved (:func:`robustbnn.bench.resolve_models`).

    Returns:
        The run's settings.

    Raises:
        ConfigError: An unknown owner or field, a value of the wrong type or out of range.
    """
    check_owners(cfg)
    models = tuple((m, model_config(m, cfg.overrides, cfg.shrink))
                   for m in dict.fromkeys((*cfg.models, *cfg.heldout_models,
                                           *filter(None, (cfg.fidelity_reference,)))))
    attacks = tuple((a, attack_settings(a, cfg)) for a in cfg.attacks
                    if a not in tuple(SuiteAttack))
    return Settings(models, attacks)

