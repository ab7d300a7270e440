"""The ``shift`` task and the clean cell's calibration rows, on real mnist5k digits.

The model is a nearest-class-mean classifier fitted to the training split (about 80% accurate,
deterministic), or the same with Gaussian logit noise drawn from the call's generator.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
from torch import Tensor, nn

from robustbnn.bench_config import BenchConfig
from robustbnn.contract.checked import Checked
from robustbnn.data.shift import corrupt, rotate
from robustbnn.data.shift.sets import shifted
from robustbnn.results import names as N
from robustbnn.results.schema import Result
from robustbnn.run.cells import Cell
from robustbnn.run.context import Context, RunSpec, bench_data, shift_images
from robustbnn.run.tasks import TASKS
from tests._helpers import task_results

N_TEST = 120


class ClassMeans(nn.Module):
    """Logits = scale · <x, class mean> (+ noise of std ``sigma`` per sample when > 0)."""

    def __init__(self, x: Tensor, y: Tensor, sigma: float = 0.0) -> None:
        super().__init__()
        flat = x.flatten(1)
        means = torch.stack([flat[y == c].mean(0) for c in range(10)])  # (C, D)
        self.register_buffer("means", means / means.norm(dim=1, keepdim=True))
        self.num_classes = 10
        self.sigma = sigma

    def sample_logits(self, x: Tensor, n_samples: int, *,
                      generator: torch.Generator | None = None) -> Tensor:
        logits = 20.0 * x.flatten(1) @ self.means.T  # (B, C)
        out = logits.expand(n_samples, *logits.shape)  # (S, B, C)
        if self.sigma > 0:
            out = out + self.sigma * torch.randn(out.shape, generator=generator)
        return out


@pytest.fixture(scope="module")
def spec() -> RunSpec:
    cfg = dataclasses.replace(BenchConfig(), n_test=N_TEST, s_eval=6, seed=1)
    return RunSpec(cfg, None, False, "cpu", "unused")


def _ctx(spec: RunSpec, task: str, params: dict, model: nn.Module) -> Context:
    params = {"memory_mb": 64, **params}
    return Context(Cell(task, "means", params), spec, bench_data(spec), Checked(model, "means"))


def _rows(spec: RunSpec, task: str, params: dict, model: nn.Module) -> list[Result]:
    return task_results(TASKS.get(task)(_ctx(spec, task, params, model)).rows)


def _model(spec: RunSpec, sigma: float = 0.0) -> ClassMeans:
    train = bench_data(spec).train
    return ClassMeans(train.x, train.y, sigma)


def _params(kind: str, levels: list, n: int = N_TEST) -> dict:
    return {N.SHIFT: kind, "levels": levels, "seed": 0, N.N: n, "measures": [],
            N.S_EVAL: 6}


def _by_level(rows: list[Result], key: str, metric: str) -> dict:
    return {r.setting[key]: r.value for r in rows
            if r.task == N.SHIFT and r.metric == metric and r.measure == ""}


def test_rotation_by_0_is_the_clean_test_set_and_gives_the_clean_metrics(spec: RunSpec) -> None:
    x = bench_data(spec).test.x
    assert torch.equal(shift_images(spec, N.ShiftKind.ROTATED, 0, N_TEST, 0), x)
    model = _model(spec)
    clean = {r.metric: r.value for r in _rows(spec, "clean", {N.S_EVAL: 6}, model)
             if r.task == N.CLEAN}
    rows = _rows(spec, "shift", _params(N.ShiftKind.ROTATED, [0, 90]), model)
    for metric in (N.ACCURACY, N.NLL, N.ECE, N.BRIER):
        assert _by_level(rows, N.ANGLE, metric)[0] == clean[metric], metric
    assert clean[N.ACCURACY] > 0.7  # a real classifier, so the check is not 0.1 == 0.1
    acc = _by_level(rows, N.ANGLE, N.ACCURACY)
    assert acc[90] < clean[N.ACCURACY] - 0.3  # digits on their side are mostly misread


def test_shift_rows_cover_every_level_metric_and_measure(spec: RunSpec) -> None:
    model = _model(spec, sigma=2.0)
    rows = _rows(spec, "shift", _params(N.ShiftKind.ROTATED, [0, 45, 180], n=50), model)
    shift = [r for r in rows if r.task == N.SHIFT]
    assert {r.setting[N.ANGLE] for r in shift} == {0, 45, 180}
    assert all(r.setting[N.SHIFT] == N.ShiftKind.ROTATED and r.setting[N.N] == 50
               and r.setting[N.S_EVAL] == 6 for r in shift)
    for angle in (0, 45, 180):
        at = [r for r in shift if r.setting[N.ANGLE] == angle]
        assert {r.metric for r in at if r.measure == ""} == {N.ACCURACY, N.NLL, N.ECE, N.BRIER}
        measures = {r.measure for r in at if r.metric == N.MEAN_UNCERTAINTY}
        assert {"predictive_entropy", "expected_entropy", "bald", "max_prob"} <= measures
    assert not any(r.task == N.RELIABILITY for r in rows)  # pooled diagram: MNIST-C only
    # The noisy model disagrees with itself, so its BALD is positive at every angle.
    bald = [r.value for r in shift if r.measure == "bald"]
    assert len(bald) == 3 and min(bald) > 0


def test_corrupted_cell_scores_each_corruption_and_pools_its_reliability(
        spec: RunSpec) -> None:
    model = _model(spec)
    names = ["fog", "stripe", "translate"]
    rows = _rows(spec, "shift", _params(N.ShiftKind.CORRUPTED, names), model)
    acc = _by_level(rows, N.CORRUPTION, N.ACCURACY)
    assert list(acc) == names
    # Each set is the corrupted test images, scored by the deterministic model: recompute.
    data = bench_data(spec).test
    for name in names:
        x = corrupt(data.x, name, seed=0, indices=torch.arange(N_TEST))
        pred = model.sample_logits(x, 1)[0].argmax(-1)
        assert acc[name] == pytest.approx((pred == data.y).double().mean().item())
    bins = [r for r in rows if r.task == N.RELIABILITY]
    counts = [r.value for r in bins if r.metric == N.COUNT]
    assert len(counts) == 15 and sum(counts) == len(names) * N_TEST
    assert {r.setting[N.SHIFT] for r in bins} == {N.ShiftKind.CORRUPTED}


def test_corrupted_sets_are_fixed_by_the_shift_seed_not_the_run_seed(spec: RunSpec) -> None:
    x = bench_data(spec).test.x[:10]
    first = shifted(x, N.ShiftKind.CORRUPTED, "shot_noise", seed=0)
    assert torch.equal(first, shifted(x, N.ShiftKind.CORRUPTED, "shot_noise", seed=0))
    assert not torch.equal(first, shifted(x, N.ShiftKind.CORRUPTED, "shot_noise", seed=1))
    # Image i depends on i alone: the first 10 of a larger set are the same images.
    more = shifted(bench_data(spec).test.x[:30], N.ShiftKind.CORRUPTED, "shot_noise", seed=0)
    assert torch.equal(more[:10], first)
    torch.testing.assert_close(shifted(x, N.ShiftKind.ROTATED, 60), rotate(x, 60))


def test_clean_reliability_rows_add_up_to_the_ece_row(spec: RunSpec) -> None:
    model = _model(spec, sigma=1.0)
    rows = _rows(spec, "clean", {N.S_EVAL: 6}, model)
    (ece_row,) = [r.value for r in rows if r.task == N.CLEAN and r.metric == N.ECE]
    bins: dict[int, dict[str, float]] = {}
    for r in rows:
        if r.task == N.RELIABILITY:
            assert r.setting[N.SHIFT] == N.ShiftKind.NONE and r.setting[N.N_BINS] == 15
            bins.setdefault(r.setting[N.BIN], {})[r.metric] = r.value
    assert sorted(bins) == list(range(15))
    total = sum(b[N.COUNT] for b in bins.values())
    assert total == N_TEST
    gap = sum(b[N.COUNT] / total * abs(b[N.ACCURACY] - b[N.CONFIDENCE])
              for b in bins.values() if b[N.COUNT] > 0)
    assert gap == pytest.approx(ece_row, abs=1e-6)
    assert all(N.CONFIDENCE not in b for b in bins.values() if b[N.COUNT] == 0)


def test_shift_cell_is_reproducible_and_its_levels_draw_their_own_samples(
        spec: RunSpec) -> None:
    model = _model(spec, sigma=3.0)
    params = _params(N.ShiftKind.ROTATED, [0, 360], n=40)  # two identical image sets
    first = _rows(spec, "shift", params, model)
    assert first == _rows(spec, "shift", params, model)
    nll = _by_level(first, N.ANGLE, N.NLL)
    assert nll[0] != nll[360]  # same images, fresh posterior samples per level

