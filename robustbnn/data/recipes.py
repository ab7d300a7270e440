"""Dataset recipes: the JSON files in the top-level ``datasets/`` folder.

They ship inside the wheel as the package ``robustbnn.recipes``. A recipe states where a
dataset comes from, its files with official checksums, its license and citation, and how it
is split. See ``datasets/README.md``.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

from robustbnn.errors import UnknownNameError

_PACKAGE = "robustbnn.recipes"


def recipe_names() -> list[str]:
    """Names of the shipped recipes (file names without ``.json``), sorted."""
    return sorted(p.name[: -len(".json")] for p in files(_PACKAGE).iterdir()
                  if p.name.endswith(".json"))


def load_recipe(name: str) -> dict[str, Any]:
    """Read the recipe ``datasets/<name>.json``.

    Args:
        name: Recipe name, e.g. ``"mnist"``.

    Returns:
        A fresh dict (callers may modify it).

    Raises:
        UnknownNameError: If there is no such recipe; lists the known ones.
    """
    known = recipe_names()
    if name not in known:
        raise UnknownNameError("recipe", name, known)
    return json.loads((files(_PACKAGE) / f"{name}.json").read_text(encoding="utf-8"))
