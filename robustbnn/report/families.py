"""Each model's family, as the run recorded it, for grouping figures and filtering tables.

A model's family is a short display name (``"MC dropout"``, ``"variational"``) that its
registry entry declares (``ModelSpec.family``) and the run writes to ``run.json``
(``models.<name>.family``). Runs recorded before families existed have none: their models
fall in :data:`OTHER`.

Figures with every model draw one panel per family (:func:`panel_groups`), families sorted by
name with :data:`OTHER` last, models sorted by name; a group of more than
:data:`MAX_PER_PANEL` models (all of an old run's models are :data:`OTHER`) is split into
parts, so no panel holds more lines than a reader can follow.

Example:
    >>> run = {"models": {"mlp": {"family": "deterministic"}, "mine": {"config": {}}}}
    >>> model_families([run], ["mlp", "mine", "gone"])
    {'mlp': 'deterministic', 'mine': 'other', 'gone': 'other'}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["MAX_PER_PANEL", "OTHER", "family_groups", "model_families", "panel_groups"]

OTHER = "other"
MAX_PER_PANEL = 6  # lines one panel holds readably


def model_families(runs: list[dict], models: Iterable[str]) -> dict[str, str]:
    """Each model's family from the runs' ``run.json``.

    Args:
        runs: Parsed ``run.json`` dicts; the first run that names a model's family wins.
        models: The models to look up, in the order the result keeps.

    Returns:
        ``{model: family}``, with :data:`OTHER` where no run records a family.
    """
    out = {}
    for model in dict.fromkeys(models):
        found = (run.get("models", {}).get(model, {}) for run in runs)
        names = [e["family"] for e in found
                 if isinstance(e, dict) and isinstance(e.get("family"), str) and e["family"]]
        out[model] = names[0] if names else OTHER
    return out


def family_groups(families: dict[str, str]) -> dict[str, list[str]]:
    """``{family: [models]}``, families in order of first appearance, :data:`OTHER` last.

    Example:
        >>> family_groups({"a": "other", "b": "x", "c": "y", "d": "x"})
        {'x': ['b', 'd'], 'y': ['c'], 'other': ['a']}
    """
    groups: dict[str, list[str]] = {}
    for model, family in families.items():
        groups.setdefault(family, []).append(model)
    if OTHER in groups:
        groups[OTHER] = groups.pop(OTHER)
    return groups


def panel_groups(models: Iterable[str], families: Mapping[str, str] | None = None, *,
                 max_per_panel: int = MAX_PER_PANEL) -> dict[str, list[str]]:
    """``{panel title: models}``: one panel per family, none with more than ``max_per_panel``.

    Args:
        models: The models to draw (repeats are ignored).
        families: Each model's family (:func:`model_families`); a model it lacks is
            :data:`OTHER`.
        max_per_panel: The most models in one panel; a larger family is split into equal
            parts titled ``"family (1/3)"`` and so on.

    Returns:
        Families sorted by name (case-insensitive), :data:`OTHER` last; models sorted within.

    Example:
        >>> panel_groups(["c", "a", "b"], {"a": "x", "b": "Y"})
        {'x': ['a'], 'Y': ['b'], 'other': ['c']}
        >>> panel_groups("abcde", max_per_panel=3)
        {'other (1/2)': ['a', 'b', 'c'], 'other (2/2)': ['d', 'e']}
    """
    families = families or {}
    grouped = family_groups({m: families.get(m, OTHER) for m in sorted(set(models))})
    order = sorted((f for f in grouped if f != OTHER), key=lambda f: (f.casefold(), f))
    out: dict[str, list[str]] = {}
    for family in [*order, *([OTHER] if OTHER in grouped else [])]:
        members = grouped[family]
        parts = -(-len(members) // max_per_panel)
        size = -(-len(members) // parts)
        for i in range(parts):
            title = family if parts == 1 else f"{family} ({i + 1}/{parts})"
            out[title] = members[i * size:(i + 1) * size]
    return out
