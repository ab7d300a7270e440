"""The plug-ins in examples/ run as an outside user runs them: through the CLI, and through the
contract kit. A cached rerun must give the trained run's numbers: a library that draws from
torch's global RNG (bayesian-torch) breaks exactly that unless it runs in seeded_global."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import robustbnn.cli as cli
from robustbnn.models import MODELS

# (library it needs, pip name, plug-in module, model it registers)
EXAMPLES = [
    ("bayesian_torch", "bayesian-torch", "examples.bayesian_torch_plugin", "bt_mlp"),
    ("laplace", "laplace-torch", "examples.laplace_plugin", "lt_lastlayer_diag"),
]


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test imports its plug-in itself and leaves the registry as it found it."""
    for _, _, module, _ in EXAMPLES:
        monkeypatch.delitem(sys.modules, module, raising=False)
    with MODELS.sandbox():
        yield


def _rows(out: Path) -> list[dict]:
    """results.jsonl without the wall-clock rows (which no two runs share)."""
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return [r for r in rows if not r["metric"].startswith("seconds")]


def _cached(out: Path) -> list[bool]:
    return [m["cached"] for m in json.loads((out / "run.json").read_text())["models"].values()]


@pytest.mark.bench
@pytest.mark.parametrize(("library", "pip_name", "module", "model"), EXAMPLES)
@pytest.mark.filterwarnings("ignore::FutureWarning")  # torch.jit.script, in the libraries
def test_example_benches_and_its_cached_rerun_agrees(library: str, pip_name: str, module: str,
                                                     model: str, fresh_registry: None,
                                                     tmp_path: Path) -> None:
    pytest.importorskip(library, reason=f"{pip_name} is not installed, which {module} needs")
    args = ["bench", "--suite", "smoke", "--quiet", "--plugin", module, "--models", model,
            "--cache-dir", str(tmp_path / "cache")]
    assert cli.main([*args, "--out", str(tmp_path / "trained")]) == 0
    rows = _rows(tmp_path / "trained")
    assert rows and {r["model"] for r in rows} == {model}
    assert {"clean", "fgsm", "ood"} <= {r["task"] for r in rows}
    assert cli.main([*args, "--out", str(tmp_path / "cached")]) == 0
    assert _cached(tmp_path / "trained") == [False] and _cached(tmp_path / "cached") == [True]
    assert _rows(tmp_path / "cached") == rows


@pytest.mark.parametrize(("library", "pip_name", "module", "model"), EXAMPLES)
@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_example_keeps_the_model_contract(library: str, pip_name: str, module: str,
                                          model: str, fresh_registry: None) -> None:
    pytest.importorskip(library, reason=f"{pip_name} is not installed, which {module} needs")
    from robustbnn.testing import check_model

    importlib.import_module(module)
    check_model(model).raise_if_failed()
