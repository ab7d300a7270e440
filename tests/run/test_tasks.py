"""Bench evaluation tasks: FGSM sanity checks, the targeted curve, figures, leaderboard columns."""

from __future__ import annotations

import dataclasses
import types

import numpy as np
import pandas as pd
import pytest
import torch

from robustbnn.bench_config import BenchConfig
from robustbnn.config import TrainConfig
from robustbnn.contract.checked import Checked
from robustbnn.contract.predict import DEFAULT_MEMORY_MB
from robustbnn.ood import UNCERTAINTIES, builtin_measures
from robustbnn.report import leaderboard as lb
from robustbnn.report.figures import write_figures
from robustbnn.results.schema import Result, setting
from robustbnn.results.store import results_frame
from robustbnn.run.cells import Cell
from robustbnn.run.context import Context, RunSpec
from robustbnn.run.tasks import TASKS
from tests._helpers import seeded, task_results
from tests.attacks._models import SHAPE, NoisyLinear, linear


def _data(n: int = 40):
    x = 0.2 + 0.6 * torch.rand(n, *SHAPE, generator=seeded(7))
    model = linear()
    y = model.sample_logits(x, 1)[0].argmax(-1)  # every clean point correct
    return model, x, y


def _run(task: str, params: dict, model, x, y, *, s_eval: int = 2, seed: int = 3,
         name: str = "lin") -> list[Result]:
    """Run one evaluation task on ``model`` with test split (x, y); its rows as Results."""
    spec = RunSpec(dataclasses.replace(BenchConfig(), seed=seed, s_eval=s_eval), None, False,
                   "cpu", "unused")
    data = types.SimpleNamespace(test=types.SimpleNamespace(x=x, y=y), name="toy")
    params = {"memory_mb": DEFAULT_MEMORY_MB, **params}  # as the plan adds to every cell
    ctx = Context(Cell(task, name, params), spec, data, Checked(model, name))
    return task_results(TASKS.get(task)(ctx).rows)


FGSM_PARAMS = {"objective": "predictive", "label": "true", "clip": True, "S_eval": 2,
               "S_attack": 1}


def _value(rows: list[Result], measure: str, metric: str) -> float:
    (row,) = [r for r in rows if r.measure == measure and r.metric == metric]
    return row.value


def test_sanity_rows_pass_on_a_linear_model_and_hold_values_and_flags() -> None:
    model, x, y = _data()
    fgsm = _run("fgsm", FGSM_PARAMS | {"eps_grid": [0.05, 0.1, 0.2], "n": 0}, model, x, y)
    rows = _run("sanity", FGSM_PARAMS | {"eps": 0.1, "n": 0}, model, x, y)
    checks = {r.measure for r in fgsm + rows if r.task == "fgsm_sanity"}
    assert checks == {"gradient_nonzero", "accuracy_monotone", "beats_random_noise",
                      "fixed_randomness_succeeds"}
    for check in checks:
        assert _value(fgsm + rows, check, "passed") == 1.0
    assert _value(fgsm, "gradient_nonzero", "value") == 1.0
    acc = [r.value for r in fgsm if r.metric == "accuracy"]
    assert acc == sorted(acc, reverse=True)
    assert _value(fgsm, "accuracy_monotone", "value") == 0.0
    # Clean accuracy is 1, so the frozen-sample drop is 1 - the FGSM accuracy at eps 0.1.
    assert _value(rows, "fixed_randomness_succeeds", "value") == pytest.approx(1 - acc[1])
    assert all(r.model == "lin" and r.seed == 3 and r.dataset == "toy" for r in fgsm + rows)
    eps = [r.setting["eps"] for r in fgsm if r.metric == "accuracy"]
    assert eps == [0.05, 0.1, 0.2] and all(isinstance(e, float) for e in eps)


def test_a_rising_accuracy_curve_is_flagged() -> None:
    from robustbnn.attacks.sanity import accuracy_monotone

    check = accuracy_monotone((0.1, 0.2, 0.3), (0.5, 0.2, 0.6), tol=0.01)
    assert check.value == pytest.approx(0.4) and not check.passed


def test_targeted_rows_drop_the_target_class_and_bound_the_distortion() -> None:
    model = NoisyLinear(sigma=0.5)
    x = torch.rand(13, *SHAPE, generator=seeded(1))
    y = torch.tensor([0, 1, 2, 3, 0, 5, 6, 1, 2, 3, 4, 0, 6])  # three of class 0
    params = {"steps": 6, "step_size": 0.02, "S_attack": 3, "objective": "predictive",
              "target": 0, "every": 3, "n": 0, "S_eval": 4}
    rows = _run("targeted", params, model, x, y, s_eval=4, seed=0, name="noisy")
    frame = results_frame(rows)
    steps = frame["setting"].map(lambda s: s["step"])
    assert sorted(set(steps)) == [0, 3, 6]
    assert (frame["setting"].map(lambda s: s["n"]) == 10).all()  # 13 - 3 of the target
    per_step = frame[frame["metric"] != "mean_uncertainty"].groupby("metric").size()
    assert per_step.to_dict() == {"accuracy": 3, "l2": 3, "linf": 3, "target_success": 3}
    assert set(frame.loc[frame["metric"] == "mean_uncertainty", "measure"]) == set(
        builtin_measures(logits=False))
    linf = frame[frame["metric"] == "linf"].assign(step=steps)
    assert (linf["value"] <= linf["step"] * 0.02 + 1e-6).all()
    success = frame[frame["metric"] == "target_success"].assign(step=steps)
    assert success.sort_values("step")["value"].iloc[-1] > success["value"].iloc[0]


def _results() -> pd.DataFrame:
    rows = []
    for model, acc in (("a", 0.9), ("b", 0.8)):
        rows.append(Result(model, 0, "clean", "toy", setting(S_eval=2), "", "accuracy", acc))
        for s in (1, 32):
            for eps, a in ((0.1, acc - 0.2), (0.3, acc - 0.5)):
                knobs = setting(eps=eps, S_attack=s, S_eval=2)
                rows.append(Result(model, 0, "fgsm", "toy", knobs, "", "accuracy", a))
                rows.append(Result(model, 0, "fgsm", "toy", knobs, "bald", "adversary_detection",
                                   0.6))
            rows.append(Result(model, 0, "fgsm_sanity", "toy", setting(S_attack=s),
                               "beats_random_noise", "passed", float(model == "a" or s == 1)))
        for step, succ in ((0, 0.0), (10, 0.4), (20, 0.7 if model == "a" else 0.9)):
            knobs = setting(step=step, step_size=0.01, target=0, S_attack=1, S_eval=2, n=5)
            rows.append(Result(model, 0, "targeted", "toy", knobs, "", "target_success", succ))
    return results_frame(rows)


def test_leaderboard_shows_targeted_success_and_violated_checks() -> None:
    table = lb.leaderboard(_results()).table
    assert list(table.index) == ["a", "b"]
    assert table.loc["a", "targeted_success_step20"] == 0.7
    assert table.loc["b", "targeted_success_step20"] == 0.9
    assert table.loc["a", "sanity"] == "ok"
    assert table.loc["b", "sanity"] == "beats_random_noise (S=32)"


@pytest.mark.bench
def test_figures_are_pngs_per_model_from_the_results_alone(tmp_path) -> None:
    paths = [p for p in write_figures(_results(), tmp_path) if p.suffix == ".png"]  # + .svg
    names = sorted(p.name for p in paths)
    assert names == ["attack_a.png", "attack_b.png", "fgsm_accuracy.png", "targeted_a.png",
                     "targeted_b.png"]
    for path in paths:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(tmp_path.rglob("*.tmp"))
    clean_only = _results().query("task == 'clean'")
    assert write_figures(clean_only, tmp_path / "none") == []


@pytest.mark.parametrize(("decay", "last"), [(1.0, 0.01), (10.0, 0.001)])
def test_lr_decay_reaches_lr_over_decay_at_the_last_epoch(decay: float, last: float) -> None:
    from robustbnn.data.types import DataBundle, Split
    from robustbnn.training.fit import fit
    from tests._toys import build

    model = build("mlp")
    seen: list[float] = []
    step = torch.optim.Adam.step

    def spy(self, *args, **kwargs):
        seen.append(self.param_groups[0]["lr"])
        return step(self, *args, **kwargs)

    x, y = torch.rand(20, *SHAPE, generator=seeded(0)), torch.arange(20) % 7
    split = Split(x, y)
    data = DataBundle("toy", split, split, split, 7, "toy", "toy")
    cfg = dataclasses.replace(model_cfg := TrainConfig(), epochs=3, lr=0.01, lr_decay=decay,
                              batch_size=20)
    assert model_cfg.lr_decay == 1.0  # constant learning rate unless asked
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(torch.optim.Adam, "step", spy)
        fit(model, cfg, data, name="mlp", generator=seeded(1), progress=False)
    assert seen[0] == pytest.approx(0.01) and seen[-1] == pytest.approx(last)
    assert seen[1] == pytest.approx(0.01 * decay ** -0.5)


def test_nonpositive_lr_decay_is_a_config_error() -> None:
    from robustbnn.data.types import DataBundle, Split
    from robustbnn.errors import ConfigError
    from robustbnn.training.fit import fit
    from tests._toys import build

    split = Split(torch.rand(4, *SHAPE), torch.arange(4))
    data = DataBundle("toy", split, split, split, 7, "toy", "toy")
    cfg = dataclasses.replace(TrainConfig(), epochs=1, lr_decay=0.0)
    with pytest.raises(ConfigError, match=r"mlp: lr_decay must be > 0 .*--set mlp.lr_decay=10"):
        fit(build("mlp"), cfg, data, name="mlp", progress=False)


def test_scores_round_trip_and_recompute_the_stored_metrics(tmp_path) -> None:
    from sklearn.metrics import roc_auc_score

    from robustbnn.results.scores import read_scores, write_scores

    rng = np.random.default_rng(0)
    s_in = {"bald": rng.random(7), "max_prob": rng.random(7)}
    s_out = {"bald": rng.random(5) + 0.3, "max_prob": rng.random(5)}
    path = write_scores(tmp_path, "m", "heldout:3", s_in, s_out)
    assert path == tmp_path / "scores" / "m" / "heldout_3.npz"
    labels, scores = read_scores(path)
    assert labels.tolist() == [0] * 7 + [1] * 5 and sorted(scores) == ["bald", "max_prob"]
    rows = _ood_rows(s_in, s_out, s_eval=9, dataset="heldout:3")
    auroc = {r.measure: r.value for r in rows if r.metric == "auroc"}
    for measure in s_in:
        assert auroc[measure] == pytest.approx(roc_auc_score(labels, scores[measure]))
    assert all(r.setting == {"S_eval": 9, "n_in": 7, "n_out": 5} for r in rows)
    with pytest.raises(ValueError, match="different measures"):
        write_scores(tmp_path, "m", "x", s_in, {"bald": s_out["bald"]})


def test_ood_figure_needs_the_scores(tmp_path) -> None:
    from robustbnn.report.figures import ood_figure
    from robustbnn.results.scores import write_scores

    rng = np.random.default_rng(1)
    names = UNCERTAINTIES.names()
    s_in = {m: rng.random(20) for m in names}
    s_out = {m: rng.random(10) + 0.5 for m in names}
    frame = results_frame(_ood_rows(s_in, s_out, s_eval=3, dataset="uniform", name="m"))
    assert ood_figure(frame, tmp_path, "m", tmp_path / "ood_m.png") is None
    write_scores(tmp_path, "m", "uniform", s_in, s_out)
    path = ood_figure(frame, tmp_path, "m", tmp_path / "ood_m.png")
    assert path.read_bytes()[:4] == b"\x89PNG"


def _ood_rows(s_in: dict, s_out: dict, *, s_eval: int, dataset: str,
              name: str = "m") -> list[Result]:
    from robustbnn.run.tasks._scoring import ranking_rows

    spec = RunSpec(dataclasses.replace(BenchConfig(), seed=0, s_eval=s_eval), None, False,
                   "cpu", "unused")
    ctx = Context(Cell("ood", name, {}), spec, types.SimpleNamespace(name="toy"))
    return task_results(ranking_rows(ctx, s_in, s_out, dataset=dataset))


def test_pgd_task_lowers_accuracy_and_records_its_setting() -> None:
    model, x, y = _data()
    params = {"attack": "pgd", "eps": 0.2, "S_attack": 1, "steps": 5, "restarts": 1,
              "step_size": 0.05, "objective": "expected", "label": "true", "n": 20,
              "S_eval": 2}
    rows = _run("attack", params, model, x, y)
    (acc,) = [r for r in rows if r.metric == "accuracy"]
    assert acc.task == "pgd" and acc.value < 1.0  # every clean point was correct
    assert acc.setting == {"eps": 0.2, "S_attack": 1, "S_eval": 2, "steps": 5, "restarts": 1,
                           "step_size": 0.05, "objective": "expected", "label": "true", "n": 20}


def test_a_plugin_attack_runs_like_a_built_in_one() -> None:
    from robustbnn.attacks import ATTACKS

    @dataclasses.dataclass(frozen=True)
    class Flip:
        """Moves every pixel by -eps (a deterministic plug-in attack)."""

        eps: float = 0.1

        def __call__(self, model, x, y, *, generator=None):
            return (x - self.eps).clamp(0, 1)

    with ATTACKS.temporary("flip_test_attack", Flip):
        model, x, y = _data(10)
        params = {"attack": "flip_test_attack", "eps": 0.5, "S_attack": 1, "steps": 1,
                  "restarts": 1, "step_size": 0.1, "objective": "expected", "label": "true",
                  "n": 0, "S_eval": 2}
        rows = _run("attack", params, model, x, y)
    assert {r.task for r in rows} == {"flip_test_attack"}
    assert {r.metric for r in rows} >= {"accuracy", "mean_uncertainty"}
