"""The names a package's files register, read from their source rather than the registry.

Registry tests compare the registry with these, so a model or dataset file that registers
but is not imported (or a registry entry with no file) fails without a hand-typed name list.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def registered_in(path: Path, call: str) -> list[str]:
    """First arguments of every ``call("name", ...)`` and ``call(name="...")`` in ``path``."""
    names = []
    calls = [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(n, ast.Call) and ast.unparse(n.func) == call]
    for node in sorted(calls, key=lambda n: (n.lineno, n.col_offset)):
        arg = node.args[0] if node.args else next(k.value for k in node.keywords
                                                  if k.arg == "name")
        assert isinstance(arg, ast.Constant) and isinstance(arg.value, str), (
            f"{path}:{node.lineno}: {call} with a computed name; register a string literal")
        names.append(arg.value)
    return names


def _imported_modules(package: str) -> list[str]:
    """Submodules of ``package`` its ``__init__.py`` imports, in import order."""
    init = ROOT.joinpath(*package.split("."), "__init__.py")
    found = []
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module == package:
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(package + "."):
            found.append(node.module.removeprefix(package + ".").split(".")[0])
    return list(dict.fromkeys(found))


def registered_names(package: str, call: str) -> list[str]:
    """Every name ``call`` registers in the modules of ``package``, in the order its
    ``__init__.py`` imports them (each module's names in source order).

    Raises:
        AssertionError: If a module registers names but ``__init__.py`` does not import it.
    """
    folder = ROOT.joinpath(*package.split("."))
    per_module = {p.stem: registered_in(p, call) for p in sorted(folder.glob("*.py"))}
    per_module = {stem: names for stem, names in per_module.items() if names}
    imported = _imported_modules(package)
    missing = sorted(set(per_module) - set(imported))
    assert not missing, f"{package}/__init__.py does not import {missing}, which register names"
    return [name for stem in imported for name in per_module.get(stem, [])]
