"""The budget cells' objectives (BenchConfig.budget_objectives): in the cell params, so the
budget cells' ids change exactly when they change, and refused by name when unknown."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from robustbnn.bench import BenchOptions, check_bench, make_spec
from robustbnn.bench_config import BenchConfig, BudgetObjective
from robustbnn.errors import ConfigError
from robustbnn.run.plan import build_plan
from robustbnn.suites import SUITES


def _ids(**changes: object) -> dict[str, tuple[str, dict]]:
    cfg = check_bench(dataclasses.replace(SUITES.get("smoke"), models=("mlp",),
                                          robustness=("budget",), **changes))
    plan = build_plan(make_spec(cfg, BenchOptions(out_dir=Path("unused"))))
    return {c.label: (c.id, c.params) for c in plan.cells}


@pytest.mark.bench  # builds a smoke plan: loads the dataset for its fingerprint
def test_the_default_is_ce_and_dlr_and_only_budget_ids_follow_the_setting() -> None:
    assert BenchConfig().budget_objectives == (BudgetObjective.CE, BudgetObjective.DLR)
    both, ce = _ids(), _ids(budget_objectives=("ce",))
    assert both.keys() == ce.keys()
    changed = {label for label in both if both[label][0] != ce[label][0]}
    assert changed == {label for label in both if label.startswith("budget ")} != set()
    for label in changed:
        assert both[label][1]["objectives"] == ["ce", "dlr"]
        assert ce[label][1]["objectives"] == ["ce"]


@pytest.mark.parametrize(("objectives", "message"), [
    (("ce", "margin"), r"unknown budget objective\(s\) \['margin'\]; known: \['ce', 'dlr'\]"),
    (("dlr", "dlr"), r"budget_objectives names \['dlr'\] more than once"),
    ((), r"budget_objectives is empty but the budget cells need one"),
])
def test_bad_objectives_are_refused_in_one_line(objectives, message) -> None:
    with pytest.raises(ConfigError, match=message):
        BenchConfig(robustness=("budget",), budget_objectives=objectives).check()
    assert BenchConfig(budget_objectives=("dlr", "ce")).check().budget_objectives == (
        BudgetObjective.DLR, BudgetObjective.CE)
