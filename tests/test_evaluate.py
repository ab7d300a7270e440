"""Bench evaluation rows: FGSM sanity checks, the targeted curve, figures, leaderboard columns."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
import torch

from robustbnn.attacks import FGSM, TargetedIFGSM
from robustbnn.config import TrainConfig
from robustbnn.evaluate import fgsm_rows, sanity_rows, targeted_rows
from robustbnn.ood import UNCERTAINTIES
from robustbnn.report import leaderboard as lb
from robustbnn.report.figures import write_figures
from robustbnn.report.schema import Result
from robustbnn.report.store import results_frame
from tests.attacks._models import SHAPE, NoisyLinear, linear


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _data(n: int = 40):
    x = 0.2 + 0.6 * torch.rand(n, *SHAPE, generator=_gen(7))
    model = linear()
    y = model.sample_logits(x, 1)[0].argmax(-1)  # every clean point correct
    return model, x, y


def _value(rows: list[Result], measure: str, metric: str) -> float:
    (row,) = [r for r in rows if r.measure == measure and r.metric == metric]
    return row.value


def test_sanity_rows_pass_on_a_linear_model_and_hold_values_and_flags() -> None:
    model, x, y = _data()
    attack = FGSM(eps=0.0, n_samples=1)
    fgsm = fgsm_rows(model, x, y, eps_grid=(0.05, 0.1, 0.2), attack=attack, s_eval=2,
                     attack_generator=_gen(0), eval_generator=_gen(1), name="lin", seed=3,
                     dataset="toy")
    rows = sanity_rows(model, x, y, attack=dataclasses.replace(attack, eps=0.1), fgsm=fgsm,
                       s_eval=2, attack_generator=_gen(2), eval_generator=_gen(3),
                       member_generator=_gen(4), name="lin", seed=3, dataset="toy")
    checks = {r.measure for r in fgsm + rows if r.task == "fgsm_sanity"}
    assert checks == {"gradient_nonzero", "accuracy_monotone", "beats_random_noise",
                      "fixed_randomness_succeeds"}
    for check in checks:
        assert _value(fgsm + rows, check, "passed") == 1.0
    assert _value(fgsm, "gradient_nonzero", "value") == 1.0
    acc = [r.value for r in fgsm if r.metric == "accuracy"]
    assert acc == sorted(acc, reverse=True)
    assert _value(rows, "accuracy_monotone", "value") == 0.0
    # Clean accuracy is 1, so the frozen-sample drop is 1 - the FGSM accuracy at eps 0.1.
    assert _value(rows, "fixed_randomness_succeeds", "value") == pytest.approx(1 - acc[1])
    assert all(r.model == "lin" and r.seed == 3 and r.dataset == "toy" for r in rows)


def test_a_rising_accuracy_curve_is_flagged() -> None:
    model, x, y = _data(8)
    knobs = "eps={};S_attack=1;S_eval=2;objective=predictive;label=true;clip=True"
    fgsm = [Result("m", 0, "fgsm", "toy", knobs.format(e), "", "accuracy", a)
            for e, a in ((0.1, 0.5), (0.2, 0.2), (0.3, 0.6))]
    rows = sanity_rows(model, x, y, attack=FGSM(eps=0.1), fgsm=fgsm, s_eval=2,
                       attack_generator=_gen(0), eval_generator=_gen(1),
                       member_generator=_gen(2), name="m", seed=0, dataset="toy")
    assert _value(rows, "accuracy_monotone", "value") == pytest.approx(0.4)
    assert _value(rows, "accuracy_monotone", "passed") == 0.0


def test_targeted_rows_drop_the_target_class_and_bound_the_distortion() -> None:
    model = NoisyLinear(sigma=0.5)
    x = torch.rand(13, *SHAPE, generator=_gen(1))
    y = torch.tensor([0, 1, 2, 3, 0, 5, 6, 1, 2, 3, 4, 0, 6])  # three of class 0
    attack = TargetedIFGSM(step_size=0.02, steps=6, n_samples=3, checkpoint_every=3)
    rows = targeted_rows(model, x, y, attack=attack, s_eval=4, attack_generator=_gen(2),
                         eval_generator=_gen(3), name="noisy", seed=0, dataset="toy")
    frame = results_frame(rows)
    steps = frame["setting"].str.extract(r"step=(\d+);")[0].astype(int)
    assert sorted(set(steps)) == [0, 3, 6]
    assert frame["setting"].str.contains(";n=10$").all()  # 13 - 3 examples of the target
    per_step = frame[frame["metric"] != "mean_uncertainty"].groupby("metric").size()
    assert per_step.to_dict() == {"accuracy": 3, "l2": 3, "linf": 3, "target_success": 3}
    assert set(frame.loc[frame["metric"] == "mean_uncertainty", "measure"]) == set(
        UNCERTAINTIES.names())
    linf = frame[frame["metric"] == "linf"].assign(step=steps)
    assert (linf["value"] <= linf["step"] * 0.02 + 1e-6).all()
    success = frame[frame["metric"] == "target_success"].assign(step=steps)
    assert success.sort_values("step")["value"].iloc[-1] > success["value"].iloc[0]


def _results() -> pd.DataFrame:
    rows = []
    for model, acc in (("a", 0.9), ("b", 0.8)):
        rows.append(Result(model, 0, "clean", "toy", "S_eval=2", "", "accuracy", acc))
        for s in (1, 32):
            for eps, a in ((0.1, acc - 0.2), (0.3, acc - 0.5)):
                knobs = f"eps={eps};S_attack={s};S_eval=2"
                rows.append(Result(model, 0, "fgsm", "toy", knobs, "", "accuracy", a))
                rows.append(Result(model, 0, "fgsm", "toy", knobs, "bald", "adversary_detection",
                                   0.6))
            rows.append(Result(model, 0, "fgsm_sanity", "toy", f"S_attack={s}",
                               "beats_random_noise", "passed", float(model == "a" or s == 1)))
        for step, succ in ((0, 0.0), (10, 0.4), (20, 0.7 if model == "a" else 0.9)):
            knobs = f"step={step};step_size=0.01;target=0;S_attack=1;S_eval=2;n=5"
            rows.append(Result(model, 0, "targeted", "toy", knobs, "", "target_success", succ))
    return results_frame(rows)


def test_leaderboard_shows_targeted_success_and_violated_checks() -> None:
    table = lb.leaderboard(_results()).table
    assert list(table.index) == ["a", "b"]
    assert table.loc["a", "targeted_success_step20"] == 0.7
    assert table.loc["b", "targeted_success_step20"] == 0.9
    assert table.loc["a", "sanity"] == "ok"
    assert table.loc["b", "sanity"] == "beats_random_noise (S=32)"


def test_figures_are_pngs_per_model_from_the_results_alone(tmp_path) -> None:
    paths = write_figures(_results(), tmp_path)
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
    from robustbnn.train import fit
    from tests._toys import build

    model = build("mlp")
    seen: list[float] = []
    step = torch.optim.Adam.step

    def spy(self, *args, **kwargs):
        seen.append(self.param_groups[0]["lr"])
        return step(self, *args, **kwargs)

    x, y = torch.rand(20, *SHAPE, generator=_gen(0)), torch.arange(20) % 7
    split = Split(x, y)
    data = DataBundle("toy", split, split, split, 7, "toy", "toy")
    cfg = dataclasses.replace(model_cfg := TrainConfig(), epochs=3, lr=0.01, lr_decay=decay,
                              batch_size=20)
    assert model_cfg.lr_decay == 1.0  # constant learning rate unless asked
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(torch.optim.Adam, "step", spy)
        fit(model, cfg, data, name="mlp", generator=_gen(1), progress=False)
    assert seen[0] == pytest.approx(0.01) and seen[-1] == pytest.approx(last)
    assert seen[1] == pytest.approx(0.01 * decay ** -0.5)


def test_nonpositive_lr_decay_is_a_config_error() -> None:
    from robustbnn.data.types import DataBundle, Split
    from robustbnn.errors import ConfigError
    from robustbnn.train import fit
    from tests._toys import build

    split = Split(torch.rand(4, *SHAPE), torch.arange(4))
    data = DataBundle("toy", split, split, split, 7, "toy", "toy")
    cfg = dataclasses.replace(TrainConfig(), epochs=1, lr_decay=0.0)
    with pytest.raises(ConfigError, match=r"mlp: lr_decay must be > 0 .*--set mlp.lr_decay=10"):
        fit(build("mlp"), cfg, data, name="mlp", progress=False)


def test_scores_round_trip_and_recompute_the_stored_metrics(tmp_path) -> None:
    from sklearn.metrics import roc_auc_score

    from robustbnn.evaluate import ood_rows
    from robustbnn.report.scores import read_scores, write_scores

    rng = np.random.default_rng(0)
    s_in = {"bald": rng.random(7), "max_prob": rng.random(7)}
    s_out = {"bald": rng.random(5) + 0.3, "max_prob": rng.random(5)}
    path = write_scores(tmp_path, "m", "heldout:3", s_in, s_out)
    assert path == tmp_path / "scores" / "m" / "heldout_3.npz"
    labels, scores = read_scores(path)
    assert labels.tolist() == [0] * 7 + [1] * 5 and sorted(scores) == ["bald", "max_prob"]
    rows = ood_rows(s_in, s_out, s_eval=9, ood_name="heldout:3", name="m", seed=0)
    auroc = {r.measure: r.value for r in rows if r.metric == "auroc"}
    for measure in s_in:
        assert auroc[measure] == pytest.approx(roc_auc_score(labels, scores[measure]))
    assert {r.setting for r in rows} == {"S_eval=9;n_in=7;n_out=5"}
    with pytest.raises(ValueError, match="different measures"):
        write_scores(tmp_path, "m", "x", s_in, {"bald": s_out["bald"]})


def test_ood_figure_needs_the_scores(tmp_path) -> None:
    from robustbnn.evaluate import ood_rows
    from robustbnn.report.figures import ood_figure
    from robustbnn.report.scores import write_scores

    rng = np.random.default_rng(1)
    names = UNCERTAINTIES.names()
    s_in = {m: rng.random(20) for m in names}
    s_out = {m: rng.random(10) + 0.5 for m in names}
    frame = results_frame(ood_rows(s_in, s_out, s_eval=3, ood_name="uniform", name="m", seed=0))
    assert ood_figure(frame, tmp_path, "m", tmp_path / "ood_m.png") is None
    write_scores(tmp_path, "m", "uniform", s_in, s_out)
    path = ood_figure(frame, tmp_path, "m", tmp_path / "ood_m.png")
    assert path.read_bytes()[:4] == b"\x89PNG"
