"""Experiments are data: their runs follow the published protocol, and ci shrinks only epochs."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from robustbnn.bench import check_names
from robustbnn.bench_config import BenchConfig
from robustbnn.report.protocol import run_fields
from robustbnn.report.published import differences
from robustbnn.reproduce import BUDGETS, EXPERIMENTS
from robustbnn.reproduce.report import undeclared_changes
from robustbnn.settings import model_config

NAMES = EXPERIMENTS.names()
# Experiments whose default variant claims the paper's protocol for every published number
# (bhn_table2's PR on Omniglot/CIFAR aside: the counts the data root holds differ).
ON_PROTOCOL = ("bhn_table2", "bhn_table1_mnist5000", "bbb_tutorial_noise", "bhn_table3")


def run_fields_of(cfg: BenchConfig, model: str) -> dict[str, Any]:
    """The protocol fields a run of ``cfg`` would record for ``model`` (its config as in
    ``run.json``), without running it."""
    mcfg = model_config(model, cfg.overrides, cfg.shrink)
    recorded = json.loads(json.dumps(dataclasses.asdict(mcfg), default=str))
    return run_fields(dataclasses.asdict(cfg), recorded)


def test_the_issue_s_experiments_are_registered() -> None:
    assert set(NAMES) >= {"bhn_table1_mnist5000", "bhn_table2", "bhn_table3", "bhn_fig5",
                          "bhn_fig7", "ligal_fig6", "ligal_fig7", "bbb_table1",
                          "bbb_tutorial_noise", "vhn_fig3"}


@pytest.mark.parametrize("name", NAMES)
def test_runs_exist_for_every_budget_and_variant_with_unique_labels(name: str) -> None:
    exp = EXPERIMENTS.get(name)
    for variant in exp.variants:
        for budget in BUDGETS:
            runs = exp.runs(budget, variant)
            labels = [r.label for r in runs]
            assert labels and len(set(labels)) == len(labels)
            for run in runs:
                check_names(run.config.check())
        full = {r.label for r in exp.runs("full", variant)}
        for c in exp.compares(variant):
            assert c.run in full, f"{name}: compare {c.row}/{c.column} reads unknown run {c.run}"


@pytest.mark.bench
@pytest.mark.parametrize("name", NAMES)
def test_the_ci_budget_shrinks_epochs_and_only_the_fields_it_declares(name: str) -> None:
    exp = EXPERIMENTS.get(name)
    for variant in exp.variants:
        assert undeclared_changes(exp, variant) == [], (
            f"{name}: declare these in the experiment's ci_shrinks, with the reason")


def test_a_ci_shrink_left_undeclared_is_caught() -> None:
    exp = EXPERIMENTS.get("ligal_fig6")
    undeclared = dataclasses.replace(exp, ci_shrinks=("n_test",))
    assert "run main: n_train 0 → 10000" in undeclared_changes(undeclared, "code")
    assert not any("n_test" in c for c in undeclared_changes(undeclared, "code"))


@pytest.mark.bench
@pytest.mark.parametrize("name", ON_PROTOCOL)
@pytest.mark.parametrize("budget", BUDGETS)
def test_runs_follow_the_published_protocol(name: str, budget: str) -> None:
    """At ``full`` every published number's protocol holds; at ``ci`` it departs only in the
    fields the experiment declares in ``ci_shrinks`` (whose numbers then get no Δ)."""
    exp = EXPERIMENTS.get(name)
    variant = exp.default_variant
    declared = set(exp.ci_shrinks) if budget == "ci" else set()
    runs = {r.label: r.config for r in exp.runs(budget, variant)}
    checked = 0
    for c in exp.compares(variant):
        if c.entry is None:
            continue
        proto = {k: v for k, v in c.entry.protocol.items() if not k.startswith("setting.")}
        diffs = differences(proto, run_fields_of(runs[c.run], c.model))
        assert [d for d in diffs if d.split(":")[0].removeprefix("bench.") not in declared] \
            == [], (c.row, c.column)
        checked += 1
    assert checked


def test_variants_that_depart_from_the_protocol_are_caught() -> None:
    exp = EXPERIMENTS.get("bhn_table2")
    runs = {r.label: r.config for r in exp.runs("ci", "relu")}
    c = next(c for c in exp.compares("relu") if c.entry is not None and c.model == "mlp")
    diffs = differences(c.entry.protocol, run_fields_of(runs[c.run], "mlp"))
    assert "model.activation: published gelu, this run relu" in diffs
    runs = {r.label: r.config for r in exp.runs("ci", "test_split")}
    diffs = differences(c.entry.protocol, run_fields_of(runs[c.run], "mlp"))
    assert "bench.ood_in_split: published val, this run test" in diffs
