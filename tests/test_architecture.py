"""The import rules of docs/architecture.md ([tool.importlinter] in pyproject.toml) hold.

import-linter is a test dependency (the ``test`` extra), so these tests fail, not skip, when
it is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "pyproject.toml"
# The linter in a fresh interpreter: it finds the package from its working directory first.
LINT = ("import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filenames=(sys.argv[1],), no_cache=True, no_logo=True))")


def _lint(cwd: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` with the repository's contracts on the ``robustbnn`` found in ``cwd``."""
    env = {**os.environ, "PYTHONPATH": str(cwd), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-c", LINT, str(CONFIG)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=60)


def test_the_package_keeps_every_import_contract() -> None:
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_a_planted_report_to_run_import_breaks_the_contracts(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "robustbnn", tmp_path / "robustbnn",
                    ignore=shutil.ignore_patterns("__pycache__"))
    module = tmp_path / "robustbnn" / "report" / "markdown.py"
    source = module.read_text(encoding="utf-8")
    module.write_text(source + "\nfrom robustbnn.run import plan  # planted\n", encoding="utf-8")
    line = source.count("\n") + 2

    done = _lint(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "robustbnn.report is not allowed to import robustbnn.run:" in done.stdout
    assert f"- robustbnn.report.markdown -> robustbnn.run.plan (l.{line})" in done.stdout
    assert "Layers: a module imports only from the floors below its own BROKEN" in done.stdout


def test_importing_the_package_loads_nothing_else() -> None:
    probe = ("import sys, robustbnn; print(sorted(m for m in sys.modules "
             "if m.split('.')[0] in ('robustbnn', 'torch', 'matplotlib')))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=True)
    # robustbnn.first_run: the logging filter for matplotlib's first-run notice (stdlib only)
    assert done.stdout.strip() == "['robustbnn', 'robustbnn.first_run']"
