"""``bench`` runs the model contract before it scores: a contract cell per model, which every
other cell of the model waits for without it entering any id; a model that breaks a clause is
refused by name, gets no numbers, and the leaderboard lists it."""

from __future__ import annotations

import dataclasses
import importlib
import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from robustbnn.bench import BenchOptions, make_spec
from robustbnn.cli import main
from robustbnn.models import MODELS
from robustbnn.run.plan import build_plan
from robustbnn.suites import SUITES

PLUGIN = "tests.plugins.bad_models"
BROKEN = {  # the four broken models of issue 27 -> the clause named first in their refusal
    "bad_probabilities": "logits",  # softmax probabilities instead of logits
    "bad_ignores_generator": "reproducible",  # draws from torch's global RNG
    "bad_noise_only_in_train": "variation",  # eval() switches sampling off
    "bad_detached_input": "input_gradient",  # x.detach() before the first layer
}
SMALL = ("--attacks", "fgsm", "--robustness", "none", "--shift", "none", "--ood", "uniform")


@pytest.fixture
def bad_models(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    """The broken models registered in a registry sandbox, so nothing leaks out."""
    monkeypatch.delitem(sys.modules, PLUGIN, raising=False)
    with MODELS.sandbox():
        yield importlib.import_module(PLUGIN)


def _bench(out: Path, models: str, *extra: str) -> list[str]:
    return ["bench", "--suite", "smoke", "--plugin", PLUGIN, "--models", models, "--no-cache",
            "--jobs", "1", "--quiet", "--out", str(out), *SMALL, *extra]


@pytest.mark.bench
def test_each_model_gets_a_contract_cell_that_enters_no_id() -> None:
    cfg = SUITES.get("smoke")
    plan = build_plan(make_spec(cfg, BenchOptions(out_dir=Path("unused"))))
    gates = {c.model: c for c in plan.cells if c.task == "contract"}
    assert set(gates) == {"mlp", "mc_dropout"}
    for model, gate in gates.items():
        mine = [c for c in plan.cells if c.model == model]
        assert mine[0] is gate and gate.deps == ()  # before the model's first cell
        assert all(c.after == (gate.id,) for c in mine[1:])
        assert gate.params["config"]["epochs"] == 10  # the smoke size
    for cell in plan.cells:
        assert dataclasses.replace(cell, after=()).id == cell.id  # after is not in the id
        assert not {g.id for g in gates.values()} & set(cell.deps)


@pytest.mark.bench
def test_bench_refuses_the_four_broken_models_and_scores_mlp(
        bad_models, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    out = tmp_path / "out"
    assert main(_bench(out, ",".join([*BROKEN, "mlp"]))) == 1
    err = capsys.readouterr().err.strip().splitlines()
    for name, clause in BROKEN.items():
        mine = [line for line in err if f"model {name!r} refused" in line]
        assert len(mine) == 1, err  # once: a refusal is not retried
        assert mine[0].startswith(f"robustbnn: error: model {name!r} refused by the model "
                                  f"contract: clause {clause!r} failed: ")
    assert "returns probabilities, not logits" in "".join(err)
    assert "do not depend on x" in "".join(err)
    results = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert set(results["model"]) == {"mlp"}
    board = json.loads((out / "leaderboard.json").read_text())
    assert [r["model"] for r in board["rows"]] == ["mlp"]
    refused = {r["model"]: r for r in board["refused"]}
    assert set(refused) == set(BROKEN)
    assert refused["bad_probabilities"]["clauses"] == ["logits"]
    assert refused["bad_detached_input"]["clauses"] == ["input_gradient"]
    md = (out / "leaderboard.md").read_text()
    assert "## Refused by the model contract" in md
    for name, clause in BROKEN.items():
        assert any(line.startswith(f"| {name} | {clause}") for line in md.splitlines())
    assert "Refused by the model contract" in (out / "leaderboard.html").read_text()
    csv = pd.read_csv(out / "leaderboard.csv", keep_default_na=False)
    assert set(csv.loc[csv["refused"] != "", "model"]) == set(BROKEN)


@pytest.mark.bench
def test_every_model_refused_is_said_and_a_fixed_model_is_cleared(
        bad_models, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    out = tmp_path / "out"
    assert main(_bench(out, "bad_probabilities")) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == ("robustbnn: error: every model of the run was refused by the model "
                       "contract, so no results or reports were written")
    assert not (out / "leaderboard.md").exists()
    # Fixed (same name, config and code identity): the contract reruns, passes, and scores.
    fixed = dataclasses.replace(MODELS.get("bad_probabilities"), build=bad_models.Noisy)
    with MODELS.temporary("bad_probabilities", fixed, replace=True):
        assert main(_bench(out, "bad_probabilities")) == 0
    board = json.loads((out / "leaderboard.json").read_text())
    assert [r["model"] for r in board["rows"]] == ["bad_probabilities"]
    assert "refused" not in board
    assert "Refused" not in (out / "leaderboard.md").read_text()
    assert json.loads((out / "run.json").read_text())["refused"] == {}
