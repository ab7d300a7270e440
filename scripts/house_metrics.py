"""The house's size in numbers: lines per folder, long files, long and wide functions.

Run from the repository root: ``python scripts/house_metrics.py``. It reads the package as text
(AST), imports nothing, and prints Markdown. docs/architecture.md explains the layers these
numbers describe; the issue that asked for them wanted each number before and after a change.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

PACKAGE = Path("robustbnn")
LONG_FILE = 300
LONG_FUNCTION = 60
WIDE_FUNCTION = 6
# The bench path: the CLI, the plan, the runner, the tasks, the store, the reports; the
# library (attacks, metrics, models, ...) is what the tasks call.
BENCH_PATH = ("cli/", "bench.py", "run/", "results/", "report/")


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = fn.args
    names = [*a.posonlyargs, *a.args, *a.kwonlyargs]
    n = len([p for p in names if p.arg not in ("self", "cls")])
    return n + (a.vararg is not None) + (a.kwarg is not None)


def main() -> int:
    files = sorted(PACKAGE.rglob("*.py"))
    per_folder: Counter[str] = Counter()
    long_files, long_fns, wide_fns = [], [], []
    for path in files:
        rel = path.relative_to(PACKAGE).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        folder = rel.split("/")[0] if "/" in rel else "(top level)"
        per_folder[folder] += lines
        if lines > LONG_FILE:
            long_files.append((lines, rel))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                span = node.end_lineno - node.lineno + 1
                if span > LONG_FUNCTION:
                    long_fns.append((span, f"{rel}:{node.name}"))
                if _params(node) > WIDE_FUNCTION:
                    where = "bench path" if rel.startswith(BENCH_PATH) else "library"
                    wide_fns.append((_params(node), f"{rel}:{node.name} [{where}]"))
    out: list[str] = []
    out.append(f"package: {sum(per_folder.values())} lines in {len(files)} files\n")
    out.append("| folder | lines |\n|---|---|")
    for folder, n in sorted(per_folder.items()):
        out.append(f"| {folder} | {n} |")
    for title, rows in (
        (f"files over {LONG_FILE} lines", long_files),
        (f"functions over {LONG_FUNCTION} lines", long_fns),
        (f"functions over {WIDE_FUNCTION} parameters", wide_fns),
    ):
        out.append(f"\n{title}: {len(rows)}")
        for n, name in sorted(rows, reverse=True):
            out.append(f"- {name} ({n})")
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
