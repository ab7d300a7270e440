"""The robustness leaderboard's cells on toy models: budget curve, worst-of-k and the flags,
adversarial OOD, and the leaderboard columns they feed."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch

from robustbnn.report.columns import compute_columns
from robustbnn.results import names as N
from robustbnn.results.schema import Result
from robustbnn.results.store import results_frame
from tests._helpers import task_results
from tests.attacks._models import SHAPE, InputDropoutLinear, NoisyLinear, linear
from tests.run.test_tasks import _run

BUDGET = {"eps": 0.15, "step_size": 0.015, "s_grid": [1, 16], "steps_grid": [5, 10],
          "restarts": 1, "k": 4, "eot_tol": 0.01, "snr_min": 1.0, "square_queries": 0,
          "square_s_attack": 1, "n": 0, "S_eval": 8, "objectives": ["ce", "dlr"]}


def _points(model, n: int = 80, seed: int = 7):
    x = torch.rand(n, *SHAPE, generator=torch.Generator().manual_seed(seed))
    y = model.sample_logits(x, 64, generator=torch.Generator().manual_seed(1)).mean(0).argmax(-1)
    return x, y


def _by(rows: list[Result], task: str, metric: str) -> dict:
    return {(r.measure, tuple(sorted(r.setting.items()))): r.value for r in rows
            if r.task == task and r.metric == metric}


def _flag(rows: list[Result], name: str) -> tuple[float, float]:
    (value,) = [r.value for r in rows if r.measure == name and r.metric == N.VALUE]
    (raised,) = [r.value for r in rows if r.measure == name and r.metric == N.RAISED]
    return value, raised


def test_eot_not_converged_fires_when_more_samples_help() -> None:
    model = InputDropoutLinear(p=0.9)
    x, y = _points(model)
    rows = _run("budget", BUDGET | {"stochastic": True}, model, x, y, s_eval=8)
    acc = {(r.setting["S_attack"], r.setting["steps"]): r.value for r in rows
           if r.task == N.PGD_BUDGET}
    assert set(acc) == {(1, 5), (1, 10), (16, 5), (16, 10)}
    gap, raised = _flag(rows, "eot_not_converged")
    assert gap == pytest.approx(acc[(1, 10)] - acc[(16, 10)])
    assert gap > 0.05 and raised == 1.0
    cost = {r.setting["gradient_evaluations"] for r in rows if r.task == N.PGD_BUDGET}
    assert cost == {5, 10, 80, 160}


def test_adaptive_eot_adds_samples_until_the_check_passes_or_the_cap() -> None:
    model = InputDropoutLinear(p=0.9)
    x, y = _points(model)
    params = BUDGET | {"stochastic": True, "s_grid": [1, 4], "s_cap": 64}
    rows = _run("budget", params, model, x, y, s_eval=8)
    acc = {(r.setting["S_attack"], r.setting["steps"]): r.value for r in rows
           if r.task == N.PGD_BUDGET}
    grid = sorted({s for s, _ in acc})
    assert grid[:2] == [1, 4] and set(grid[2:]) <= {16, 64} and grid == sorted(grid)
    assert len(grid) > 2  # 1 -> 4 lowered accuracy by more than eot_tol: the cell grew
    gap, raised = _flag(rows, "eot_not_converged")
    assert gap == pytest.approx(acc[(grid[-2], 10)] - acc[(grid[-1], 10)])
    # it stopped because the check passed, or at the cap with the flag left raised
    assert (raised == 0.0 and gap <= 0.01) or (grid[-1] == 64 and raised == 1.0)
    for before, grew in zip(grid[:-2], grid[1:-1], strict=True):  # every growth was needed
        assert acc[(before, 10)] - acc[(grew, 10)] > 0.01
    top = {r.setting["S_attack"] for r in rows if r.task == N.WORST_OF_K}
    assert top == {grid[-1]}
    cost = {r.setting["S_attack"]: r.setting["gradient_evaluations"] for r in rows
            if r.task == N.PGD_BUDGET and r.setting["steps"] == 10}
    assert cost == {s: 10 * s for s in grid}


def test_adaptive_eot_stops_at_the_cap_and_says_so() -> None:
    model = InputDropoutLinear(p=0.9)
    x, y = _points(model)
    rows = _run("budget", BUDGET | {"stochastic": True, "s_cap": 64}, model, x, y, s_eval=8)
    grid = sorted({r.setting["S_attack"] for r in rows if r.task == N.PGD_BUDGET})
    assert grid == [1, 16]  # the next S_attack (16 x 16 = 256) is over the cap
    assert _flag(rows, "eot_not_converged")[1] == 1.0
    (cap,) = {r.setting["s_cap"] for r in rows if r.measure == "eot_not_converged"}
    assert cap == 64


def test_a_deterministic_model_never_grows_its_budget() -> None:
    model = linear()
    x, y = _points(model)
    rows = _run("budget", BUDGET | {"stochastic": False, "s_cap": 256}, model, x, y)
    assert {r.setting["S_attack"] for r in rows if r.task == N.PGD_BUDGET} == {1, 16}


def test_deterministic_model_raises_no_flag_and_all_k_equals_expected() -> None:
    model = linear(scale=0.5)
    x, y = _points(model)
    rows = _run("budget", BUDGET | {"stochastic": False}, model, x, y)
    assert _flag(rows, "eot_not_converged") == (0.0, 0.0)
    assert _flag(rows, "transfer_beats_eot") == (0.0, 0.0)
    assert _flag(rows, "low_gradient_snr")[1] == 0.0
    worst = {r.metric: r.value for r in rows if r.task == N.WORST_OF_K}
    assert worst[N.ALL_K_ACCURACY] == worst[N.EXPECTED_ACCURACY]
    assert worst[N.FLIP_PROBABILITY] == 0.0


def test_the_registry_mlp_raises_no_eot_flag() -> None:
    from tests._toys import build

    model = build("mlp", in_shape=SHAPE)
    x, y = _points(model)
    rows = _run("budget", BUDGET | {"stochastic": False}, model, x, y)
    assert _flag(rows, "eot_not_converged") == (0.0, 0.0)
    assert len({r.value for r in rows if r.task == N.PGD_BUDGET}) > 1  # the attack did move


def test_worst_of_k_of_a_stochastic_model_is_below_its_expected_accuracy() -> None:
    model = NoisyLinear(sigma=2.0)
    x, y = _points(model)
    rows = _run("budget", BUDGET | {"stochastic": True, "s_grid": [2, 4], "steps_grid": [3],
                                    "eps": 0.05, "step_size": 0.01}, model, x, y, s_eval=1)
    worst = {r.metric: r.value for r in rows if r.task == N.WORST_OF_K}
    assert worst[N.ALL_K_ACCURACY] < worst[N.EXPECTED_ACCURACY]
    assert worst[N.FLIP_PROBABILITY] > 0


def test_budget_worst_case_over_ce_and_dlr_breaks_a_saturated_model_ce_alone_cannot() -> None:
    from tests._toys import LinearModel

    g = torch.Generator().manual_seed(6)
    # Logits x 1e3: the softmax rounds to one-hot in float32, so CE has no input gradient.
    model = LinearModel(1e3 * torch.randn(42, 7, generator=g), 1e3 * torch.randn(7, generator=g))
    x, y = _points(model, n=40)
    small = BUDGET | {"stochastic": False, "s_grid": [1], "steps_grid": [10]}
    allk = {}
    for objectives in (["ce"], ["ce", "dlr"]):
        rows = _run("budget", small | {"objectives": objectives}, model, x, y)
        (allk[objectives[-1]],) = [r.value for r in rows if r.task == N.WORST_OF_K
                                   and r.metric == N.ALL_K_ACCURACY]
        assert {r.setting["objective"] for r in rows
                if r.task in (N.PGD_BUDGET, N.WORST_OF_K)} == {"+".join(objectives)}
        assert _flag(rows, "transfer_beats_eot") == (0.0, 0.0)  # deterministic: transfer = EOT
    assert allk["ce"] > 0.6
    assert allk["dlr"] < 0.3


def test_square_flag_needs_the_extra() -> None:
    pytest.importorskip("torchattacks", reason="the attacks extra (torchattacks) is not "
                        "installed: pip install --no-deps -r requirements/crosscheck.txt")
    model = NoisyLinear(sigma=0.5)
    x, y = _points(model, n=20)
    rows = _run("budget", BUDGET | {"stochastic": True, "square_queries": 30,
                                    "square_s_attack": 2, "s_grid": [1, 2], "steps_grid": [3]},
                model, x, y)
    value, raised = _flag(rows, "black_box_beats_white_box")
    assert raised in (0.0, 1.0) and -1 <= value <= 1


@pytest.mark.parametrize("model", [linear(scale=0.3), NoisyLinear(sigma=0.3)],
                         ids=["deterministic", "stochastic"])
def test_adversarial_ood_auroc_is_at_most_the_clean_auroc(model, monkeypatch) -> None:
    x_in, y_in = _points(model, n=60)
    ood = torch.rand(50, *SHAPE, generator=torch.Generator().manual_seed(3)) * 0.3
    monkeypatch.setattr("robustbnn.run.tasks.adv_ood.ood_images", lambda spec, name: ood)
    with torch.no_grad():
        probs = torch.softmax(model.sample_logits(x_in, 8, generator=torch.Generator()), -1)
    from robustbnn.run.tasks._scoring import uncertainty_scores
    params = {"set": "toy", "eps_grid": [0.05, 0.1], "step_fraction": 0.2, "steps": 10,
              "S_attack": 4, "measures": ["predictive_entropy", "max_prob", "bald"], "n": 0,
              "S_eval": 8, "preprocessing": "unit"}
    rows = _run_with_inputs("adv_ood", params, model, x_in, y_in,
                            {"clean": uncertainty_scores(probs)})
    for measure in {r.measure for r in rows}:
        auroc = {r.setting["eps"]: r.value for r in rows if r.measure == measure}
        assert set(auroc) == {0.0, 0.05, 0.1}
        assert auroc[0.1] <= auroc[0.0] + 1e-9, (measure, auroc)
        assert auroc[0.1] < auroc[0.0] - 0.05, (measure, auroc)
    measures = {r.measure for r in rows}
    assert ("bald" in measures) == isinstance(model, NoisyLinear)  # constant BALD: no rows


def _run_with_inputs(task, params, model, x, y, inputs):
    import dataclasses
    import types

    from robustbnn.bench_config import BenchConfig
    from robustbnn.contract.checked import Checked
    from robustbnn.contract.predict import DEFAULT_MEMORY_MB
    from robustbnn.run.cells import Cell
    from robustbnn.run.context import Context, RunSpec
    from robustbnn.run.tasks import TASKS

    spec = RunSpec(dataclasses.replace(BenchConfig(), s_eval=params["S_eval"]), None, False,
                   "cpu", "unused")
    data = types.SimpleNamespace(test=types.SimpleNamespace(x=x, y=y), name="toy")
    ctx = Context(Cell(task, "toy", {"memory_mb": DEFAULT_MEMORY_MB, **params}), spec, data,
                  Checked(model, "toy"), inputs)
    return task_results(TASKS.get(task)(ctx).rows)


def _row(model, run, task, measure, metric, value, **knobs):
    return Result(model, run, task, "mnist5k", knobs, measure, metric, value)


def test_leaderboard_columns_of_the_robustness_rows() -> None:
    rows = []
    for run in (0, 1):
        for model, allk, adaptive in (("mlp", 0.1, 0.3), ("mc_dropout", 0.2, 0.5)):
            rows.append(_row(model, run, N.WORST_OF_K, "", N.ALL_K_ACCURACY, allk + run / 100,
                             eps=0.3, k=10, S_attack=16, steps=40))
            for measure, bonus in (("bald", 0.0), ("max_prob", 0.1)):
                for flag, value in ((True, adaptive + bonus), (False, 0.9)):
                    rows.append(_row(model, run, N.DETECTOR_AWARE, measure,
                                     N.DETECTION_AWARE_ACCURACY, value, eps=0.1, adaptive=flag,
                                     fpr=0.05))
            for eps, value in ((0.0, 0.9), (0.1, 0.6)):
                rows.append(_row(model, run, N.ADV_OOD, "bald", N.AUROC, value, eps=eps))
            raised = float(model == "mc_dropout" and run == 1)
            rows.append(_row(model, run, N.ROBUST_FLAGS, "eot_not_converged", N.RAISED, raised,
                             eps=0.3, tol=0.01))
    frame = results_frame(rows)
    frame["run"] = frame["seed"]
    columns, values = compute_columns(frame)
    keys = [c.key for c in columns]
    assert keys == ["robust_accuracy_allk_eps0.3", "robust_accuracy_allk_eps0.3_bound",
                    "detection_aware_eps0.1",
                    "detection_aware_eps0.1_nonadaptive", "detection_aware_eps0.1_measure",
                    "adv_ood_auroc_eps0.1", "adv_ood_auroc_clean",
                    "adv_ood_auroc_eps0.1_measure", "robust_flags"]
    assert values["robust_accuracy_allk_eps0.3"][("mc_dropout", 1)] == pytest.approx(0.21)
    assert values["detection_aware_eps0.1_measure"]["mlp"] == "max_prob"
    assert values["detection_aware_eps0.1"][("mlp", 0)] == pytest.approx(0.4)
    assert values["detection_aware_eps0.1_nonadaptive"][("mlp", 0)] == pytest.approx(0.9)
    assert values["robust_accuracy_allk_eps0.3_bound"].to_dict() == {
        "mlp": "converged", "mc_dropout": "upper bound (eot_not_converged)"}
    assert values["robust_flags"].to_dict() == {
        "mlp": "none", "mc_dropout": "eot_not_converged (ε=0.3 in 1/2 runs)"}
    assert isinstance(values["adv_ood_auroc_clean"], pd.Series)
    assert np.isclose(values["adv_ood_auroc_eps0.1"][("mlp", 0)], 0.6)


def test_a_sort_value_that_is_an_upper_bound_is_not_ranked() -> None:
    from robustbnn.report.headline import headline_legend
    from robustbnn.report.leaderboard import leaderboard, to_json

    rng = np.random.default_rng(0)
    rows, parts = [], []
    for run in (0, 1):
        for model, p, raised in (("bbb", 0.6, 1.0), ("mlp", 0.4, 0.0), ("mc_dropout", 0.5, 0.0)):
            correct = (rng.random(200) < p).astype(float)
            rows.append(_row(model, run, N.WORST_OF_K, "", N.ALL_K_ACCURACY, correct.mean(),
                             eps=0.1, k=10, S_attack=64 if raised else 16, steps=40))
            parts.append({N.ALL_K_ACCURACY: correct})
            rows.append(_row(model, run, N.ROBUST_FLAGS, "eot_not_converged", N.RAISED, raised,
                             eps=0.1, tol=0.01, S_attack=16, s_cap=64))
            parts.append(None)
    frame = results_frame(rows).assign(examples=parts)
    frame["run"] = frame["seed"]
    board = leaderboard(frame)
    assert board.sort == "robust_accuracy_allk_eps0.1"
    # bbb has the highest number, but it is a bound: it follows the estimates, unranked
    assert list(board.table.index) == ["mc_dropout", "mlp", "bbb"]
    assert board.unranked == ("bbb",)
    assert all("bbb" not in group for group in board.groups)
    assert board.ranking is not None and board.ranking.groups[0][0] == "mc_dropout"
    assert json.loads(to_json(board, [], title="t"))["unranked"] == ["bbb"]
    legend = " ".join(headline_legend(board))
    assert "A bound is not ranked as an estimate: `bbb` follows the ranked models" in legend
    assert board.column(board.sort).title == "PGD-EOT all-10 acc ε=0.1 (S=16–64×40)"
