"""Fidelity cells (issue 32): the plan's cells and their dependencies, the task's numbers
against a brute-force computation, and the fidelity report's rank correlations."""

from __future__ import annotations

import dataclasses
import math
import types

import pandas as pd
import pytest
import torch
from scipy.stats import spearmanr

from robustbnn.bench import check_bench
from robustbnn.bench_config import BenchConfig
from robustbnn.config import config_identity
from robustbnn.contract.checked import Checked
from robustbnn.contract.predict import DEFAULT_MEMORY_MB, sample_probs
from robustbnn.report.fidelity import correlations, fidelity_markdown
from robustbnn.report.leaderboard import leaderboard
from robustbnn.results.schema import Result, setting
from robustbnn.results.store import results_frame
from robustbnn.run import plan as plan_module
from robustbnn.run.cells import Cell
from robustbnn.run.context import Context, RunSpec
from robustbnn.run.tasks import TASKS
from robustbnn.run.tasks import fidelity as fidelity_task
from robustbnn.suites import SUITES
from tests._helpers import seeded, task_results
from tests.attacks._models import SHAPE, NoisyLinear


def _spec(cfg: BenchConfig) -> RunSpec:
    return RunSpec(check_bench(cfg), None, False, "cpu", "unused")


def _plan(seed: int, reference: str = "mlp",
          models: tuple[str, ...] = ("mlp", "mc_dropout")) -> list[Cell]:
    cfg = dataclasses.replace(SUITES.get("smoke"), seed=seed, models=models,
                              robustness=(), shift=(), attacks=(), ood=(),
                              fidelity_reference=reference)
    return list(plan_module.build_plan(_spec(cfg)).cells)


def test_fidelity_cells_follow_both_trainings_and_the_reference_trains_at_its_own_seed() -> None:
    cells = _plan(seed=0)
    trains = {c.model: c for c in cells if c.task == "train"}
    (fid,) = [c for c in cells if c.task == "fidelity"]  # none for the reference itself
    assert fid.model == "mc_dropout" and fid.params["reference"] == "mlp"
    assert set(fid.deps) == {trains["mc_dropout"].id, trains["mlp"].id}
    assert len([c for c in cells if c.task == "train" and c.model == "mlp"]) == 1
    # seed 1: the models train at seed 1, the reference (also) at fidelity_seed 0
    cells1 = _plan(seed=1)
    ref = [c for c in cells1 if c.task == "train" and c.model == "mlp"]
    assert sorted(c.params["seed"] for c in ref) == [0, 1]
    (ref0,) = [c for c in ref if c.params["seed"] == 0]
    assert ref0.id == trains["mlp"].id and "fidelity reference, seed 0" in ref0.label
    (fid1,) = [c for c in cells1 if c.task == "fidelity"]
    assert ref0.id in fid1.deps and fid1.params["reference_seed"] == 0
    order = [c.id for c in cells1]
    assert all(order.index(d) < order.index(fid1.id) for d in fid1.deps)
    # a later seed without the reference among its models still scores against it
    alone = _plan(seed=1, models=("mc_dropout",))
    assert [c.model for c in alone if c.task == "fidelity"] == ["mc_dropout"]
    assert [c.id for c in alone if c.task == "train" and c.model == "mlp"] == [ref0.id]


def test_a_config_without_a_reference_keeps_its_identity_and_plans_no_fidelity_cell() -> None:
    identity = config_identity(BenchConfig())
    assert not {"fidelity_reference", "fidelity_seed", "fidelity_samples"} & set(identity)
    assert "fidelity_reference" in config_identity(BenchConfig(fidelity_reference="hmc"))
    assert not [c for c in _plan(seed=0, reference="") if c.task == "fidelity"]


def test_the_task_scores_the_predictive_against_the_reference_by_brute_force(
        monkeypatch: pytest.MonkeyPatch) -> None:
    x = 0.2 + 0.6 * torch.rand(30, *SHAPE, generator=seeded(7))
    y = torch.zeros(30, dtype=torch.long)
    model, reference = NoisyLinear(1, sigma=1.0), NoisyLinear(2, sigma=0.5)
    monkeypatch.setattr(fidelity_task, "trained_model",
                        lambda spec, name, heldout: Checked(reference, name))
    spec = RunSpec(dataclasses.replace(BenchConfig(), seed=3, s_eval=5), None, False, "cpu",
                   "unused")
    params = {"reference": "ref", "reference_seed": 0, "reference_samples": 40, "S_eval": 5,
              "n_test": 30, "memory_mb": DEFAULT_MEMORY_MB}
    data = types.SimpleNamespace(test=types.SimpleNamespace(x=x, y=y), name="toy")
    ctx = Context(Cell("fidelity", "lin", params), spec, data, Checked(model, "lin"))
    rows = {r.metric: r.value for r in task_results(TASKS.get("fidelity")(ctx).rows)}
    p = sample_probs(model, x, 5, generator=ctx.gen("eval")).mean(0)
    q = sample_probs(reference, x, 40, generator=ctx.gen("reference")).mean(0)
    assert rows["agreement"] == pytest.approx(
        sum(int(a == b) for a, b in zip(p.argmax(1).tolist(), q.argmax(1).tolist(),
                                         strict=True)) / 30)
    tv = sum(0.5 * sum(abs(a - b) for a, b in zip(pr, qr, strict=True))
             for pr, qr in zip(p.tolist(), q.tolist(), strict=True)) / 30
    kl = sum(sum(b * (math.log(b) - math.log(a)) for a, b in zip(pr, qr, strict=True) if b > 0)
             for pr, qr in zip(p.tolist(), q.tolist(), strict=True)) / 30
    assert rows["total_variation"] == pytest.approx(tv, rel=1e-5)
    assert rows["kl_from_reference"] == pytest.approx(kl, rel=1e-4)
    assert 0 < rows["total_variation"] < 1 and rows["kl_from_reference"] > 0


def _rows(model: str, seed: int, *, tv: float | None, acc: float) -> list[Result]:
    out = [Result(model, seed, "clean", "toy", setting(S_eval=10), "", "accuracy", acc)]
    if tv is not None:
        knobs = setting(S_eval=10, reference="ref")
        out += [Result(model, seed, "fidelity", "toy", knobs, "", "agreement", 1 - tv),
                Result(model, seed, "fidelity", "toy", knobs, "", "total_variation", tv),
                Result(model, seed, "fidelity", "toy", knobs, "", "kl_from_reference", 2 * tv)]
    return out


def test_the_report_s_rank_correlations_are_spearman_s_over_the_approximate_methods() -> None:
    tvs = {"a": 0.10, "b": 0.30, "c": 0.20, "d": 0.50, "e": 0.40}
    accs = {"a": 0.90, "b": 0.60, "c": 0.80, "d": 0.70, "e": 0.50}
    results = [r for m in tvs for s in (0, 1)
               for r in _rows(m, s, tv=tvs[m] + 0.01 * s, acc=accs[m])]
    results += [r for s in (0, 1) for r in _rows("ref", s, tv=None, acc=0.99)]
    board = leaderboard(results_frame(results))
    corr = correlations(board)
    row = corr[(corr["fidelity"] == "TV to ref") & (corr["outcome"] == "clean acc")].iloc[0]
    expected = spearmanr([tvs[m] for m in tvs], [accs[m] for m in tvs])
    assert row["n"] == 5  # the reference is left out
    assert row["rho"] == pytest.approx(expected.statistic)
    assert row["p"] == pytest.approx(expected.pvalue)
    ranks = pd.Series(tvs).rank().corr(pd.Series(accs).rank())  # Spearman by hand
    assert row["rho"] == pytest.approx(ranks)
    text = fidelity_markdown(board, {"ref": "reference"})
    assert "| ref | reference |" in text and f"{expected.statistic:+.2f}" in text
    assert fidelity_markdown(leaderboard(results_frame(_rows("a", 0, tv=None, acc=0.9))),
                             {}) is None
