"""The install and CI commands stay true to the README, and every subpackage ships."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    return [b.strip() for b in blocks]


def test_readme_opens_with_the_two_setup_commands() -> None:
    bench, tests = _readme_commands()[:2]
    assert "pip install -e ." in bench and bench.endswith("robustbnn bench")
    assert "pip install -e \".[test" in tests and "pytest" in tests


def test_ci_runs_the_readme_test_command() -> None:
    test_command = _readme_commands()[1]
    assert test_command in (ROOT / ".ci" / "run").read_text()


def test_every_subpackage_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts)
             for p in (ROOT / "robustbnn").rglob("__init__.py")}
    assert found | {"robustbnn.recipes"} == listed


def test_torchattacks_is_not_a_core_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any("torchattacks" in d for d in project["dependencies"])
    assert any("torchattacks" in d for d in project["optional-dependencies"]["attacks"])


def test_the_test_command_installs_the_cross_check_oracles_without_their_pins() -> None:
    test_command = _readme_commands()[1]
    assert "pip install --no-deps -r requirements/crosscheck.txt" in test_command
    oracles = (ROOT / "requirements" / "crosscheck.txt").read_text()
    assert re.search(r"^torchattacks==\S+$", oracles, re.M)
    assert "requests" not in re.sub(r"#.*", "", oracles)


def test_the_docs_only_install_is_the_docs_extra_without_the_package() -> None:
    """requirements/docs.txt (the docs site without torch, .ci/run) lists the docs extra."""
    lines = (ROOT / "requirements" / "docs.txt").read_text().splitlines()
    listed = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["docs"]
    assert listed == extra
    assert not any(re.match(r"(torch|robustbnn|-e|\.)", line) for line in listed)
