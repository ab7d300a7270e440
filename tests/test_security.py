"""No unverified deserialisation or dynamic code on any path of the package.

The scan walks every module's syntax tree and fails on ``pickle``/``marshal``/``shelve``/
``dill`` imports, ``torch.load`` without ``weights_only=True``, ``np.load`` with
``allow_pickle=True`` and calls of the builtins ``eval``/``exec``/``compile``/``__import__``,
unless the use is on the allow-list below, each entry with the reason it is safe.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import robustbnn

PACKAGE = Path(robustbnn.__file__).parent

# (file relative to the package, what is used) -> why it is safe. Keep it short.
ALLOWED: dict[tuple[str, str], str] = {
    # The CIFAR-10 test batch exists only as a pickle. read_test_batch hashes the bytes and
    # compares the digest before unpickling, and its Unpickler.find_class admits numpy's array
    # reconstructors only, so a forged file can run no code.
    ("data/cifar10bw.py", "import pickle"):
        "restricted unpickler, digest verified first",
    # A worker round-trips the exception it just raised before sending it back (an exception
    # that cannot be unpickled would kill the pool); no outside bytes are ever loaded.
    ("run/runner.py", "import pickle"):
        "round-trips this process's own exception objects only",
}

_DESERIALISERS = {"pickle", "cPickle", "_pickle", "marshal", "shelve", "dill", "cloudpickle",
                  "joblib"}
_DYNAMIC = {"eval", "exec", "compile", "__import__"}


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _dotted(node: ast.expr) -> str:
    """``a.b.c`` for an attribute chain, "" for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def findings(source: str) -> list[tuple[int, str]]:
    """(line, what) for each risky use in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names
                      if a.name.split(".")[0] in _DESERIALISERS]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in _DESERIALISERS:
                found.append((node.lineno, f"from {node.module} import"))
        elif isinstance(node, ast.Call):
            name = _dotted(node.func)
            if name in _DYNAMIC:
                found.append((node.lineno, f"{name}()"))
            elif name == "torch.load" and not _is_true(_keyword(node, "weights_only")):
                found.append((node.lineno, "torch.load without weights_only=True"))
            elif name in ("np.load", "numpy.load") and _is_true(_keyword(node, "allow_pickle")):
                found.append((node.lineno, "np.load with allow_pickle=True"))
            elif name.endswith("read_pickle") or name.endswith("from_pickle"):
                found.append((node.lineno, f"{name}()"))
    return found


def test_no_unverified_deserialisation_or_dynamic_code() -> None:
    problems, used = [], set()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for line, what in findings(path.read_text(encoding="utf-8")):
            if (rel, what) in ALLOWED:
                used.add((rel, what))
            else:
                problems.append(f"robustbnn/{rel}:{line}: {what}")
    assert problems == [], "unsafe loading or dynamic code:\n" + "\n".join(problems)
    assert used == set(ALLOWED), f"stale allow-list entries: {set(ALLOWED) - used}"


@pytest.mark.parametrize(("source", "expected"), [
    ("import pickle", ["import pickle"]),
    ("from pickle import loads", ["from pickle import"]),
    ("import torch\ntorch.load(f)", ["torch.load without weights_only=True"]),
    ("torch.load(f, weights_only=False)", ["torch.load without weights_only=True"]),
    ("torch.load(f, weights_only=True)", []),
    ("np.load(f, allow_pickle=True)", ["np.load with allow_pickle=True"]),
    ("np.load(f)", []),
    ("eval('1')", ["eval()"]),
    ("exec('x = 1')", ["exec()"]),
    ("model.eval()", []),
    ("pd.read_pickle(p)", ["pd.read_pickle()"]),
])
def test_the_scan_sees_each_pattern(source: str, expected: list[str]) -> None:
    assert [what for _, what in findings(source)] == expected
