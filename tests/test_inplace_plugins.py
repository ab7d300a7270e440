"""Plug-ins that change their inputs in place touch no other cell (issue 49, item 1).

Whatever a plug-in receives from the harness is its own copy; an attack or model that changes
it anyway is refused by name (clause ``input_unchanged`` of both kits, and the harness at every
attack call), and the numbers of every other cell are those of a run without it.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from robustbnn.attacks import ATTACKS
from robustbnn.cli import main
from robustbnn.contract.checked import Checked
from robustbnn.models import MODELS
from robustbnn.testing import BENCH_CLAUSES, check_attack, check_model

PLUGIN = "tests.plugins.inplace_plugins"


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """The in-place plug-ins registered in registry sandboxes, so nothing leaks out."""
    monkeypatch.delitem(sys.modules, PLUGIN, raising=False)
    with ATTACKS.sandbox(), MODELS.sandbox():
        yield importlib.import_module(PLUGIN)


# --- the attack kit ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["inplace", "inplace_clone"])
def test_attack_kit_names_an_attack_that_changes_its_input(plugins: object, name: str) -> None:
    report = check_attack(name)
    failed = {r.clause: r.detail for r in report.failed}
    assert report.failed[0].clause == "input_unchanged", report.lines()
    assert failed["input_unchanged"].startswith(
        f"attack {name!r} changed its input x in place (max |diff| ")
    assert "x = x.clone()" in failed["input_unchanged"]
    # The budget is measured against the inputs as they were, not as the attack left them.
    assert "left its L∞ ball of eps=" in failed["budget"]


def test_attack_kit_passes_the_built_in_attacks_on_the_new_clause() -> None:
    for name in ("fgsm", "pgd"):
        statuses = {r.clause: r.status for r in check_attack(name).results}
        assert statuses["input_unchanged"] == "ok"


def test_check_attack_cli_reports_the_clause(plugins: object,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--plugin", PLUGIN, "--attack", "inplace"]) == 1
    out = capsys.readouterr().out
    assert "inplace  input_unchanged FAILED: attack 'inplace' changed its input x in place" in out


# --- the model kit -----------------------------------------------------------------------

def test_model_kit_names_a_model_that_changes_its_input(plugins: object) -> None:
    for clauses in (None, BENCH_CLAUSES):
        report = check_model("bad_mutates_input", clauses=clauses)
        (failed,) = report.failed  # only this clause: every other draw gets its own copy
        assert failed.clause == "input_unchanged"
        assert failed.detail.startswith(
            "model 'bad_mutates_input' changes its input x in place (max |diff| 0.")
        assert "clone it first (x = x.clone())" in failed.detail
        assert not any("thread the generator" in r.detail for r in report.results)


def test_checked_model_gets_its_own_copy(plugins: object) -> None:
    model = MODELS.get("bad_mutates_input").build(
        MODELS.get("bad_mutates_input").config(), (1, 2, 2), 3, torch.Generator())
    x = torch.rand(4, 1, 2, 2, generator=torch.Generator().manual_seed(0))
    kept = x.clone()
    Checked(model, "bad_mutates_input").sample_logits(x, 2, generator=torch.Generator())
    assert torch.equal(x, kept)


# --- through the bench -------------------------------------------------------------------

SMALL = ("--suite", "smoke", "--models", "mlp", "--shift", "none", "--ood", "uniform",
         "--jobs", "1", "--threads", "1", "--quiet", "--no-cache")
TIMED = {"cost"}  # wall-clock rows, never equal between two runs


def _rows(out: Path) -> dict[tuple, float]:
    rows = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["task"] not in TIMED:
            key = (r["model"], r["task"], r["dataset"], json.dumps(r["setting"], sort_keys=True),
                   r["measure"], r["metric"])
            rows[key] = r["value"]
    return rows


@pytest.mark.bench
def test_an_in_place_attack_changes_no_other_number(
        plugins: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    alone, beside = tmp_path / "alone", tmp_path / "beside"
    assert main(["bench", *SMALL, "--plugin", PLUGIN, "--attacks", "fgsm,pgd",
                 "--out", str(alone)]) == 0
    capsys.readouterr()
    code = main(["bench", *SMALL, "--plugin", PLUGIN, "--attacks",
                 "fgsm,pgd,inplace,inplace_clone", "--out", str(beside)])
    err = capsys.readouterr().err
    assert code == 1
    for name in ("inplace", "inplace_clone"):
        assert (f"cell '{name} mlp eps=0.1 S=4' failed (AttackContractError: attack {name!r} "
                "changed its input x in place (max |diff| 1); ") in err
    assert ("work on a copy (x = x.clone()) or out of place (x_adv = x + delta, not "
            f"x.add_(delta)), and check it with `robustbnn check --plugin {PLUGIN} --attack "
            "inplace`") in err
    without, with_it = _rows(alone), _rows(beside)
    assert not {k[1] for k in with_it} - {k[1] for k in without}  # no row of the attack
    assert with_it == without  # every other cell's numbers, bit for bit
