"""bbb_tutorial_noise's variants: each adds the tutorial code's KL estimator, its learning-rate
decay, or both, and nothing else (issue 31)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from robustbnn.data.types import DataBundle, Split
from robustbnn.reproduce import EXPERIMENTS
from robustbnn.settings import model_config
from robustbnn.training.fit import fit
from tests._helpers import seeded
from tests._toys import build

EXP = EXPERIMENTS.get("bbb_tutorial_noise")
SWITCHES = {  # variant -> the BNN fields it changes from `tutorial`
    "tutorial": set(),
    "tutorial_code": {"kl_estimator", "lr_decay"},
    "mc_kl_only": {"kl_estimator"},
    "lr_decay_only": {"lr_decay"},
    "mc_kl_attached": {"kl_estimator"},
}


def _configs(variant: str) -> dict[str, object]:
    (run,) = EXP.runs("ci", variant)
    return {m: model_config(m, run.config.overrides, run.config.shrink) for m in run.config.models}


def test_the_variants_differ_from_tutorial_in_the_two_switches_only() -> None:
    assert EXP.default_variant == "tutorial" and set(EXP.variants) == set(SWITCHES)
    base = _configs("tutorial")
    assert base["bbb_gaussian"].kl_estimator == "closed_form"
    assert base["bbb_gaussian"].lr_decay == 1.0
    for variant, fields in SWITCHES.items():
        cfgs = _configs(variant)
        assert cfgs["mlp"] == base["mlp"]  # the MLP's lr is a float: its /= 1.1 does nothing
        mine, theirs = (dataclasses.asdict(c["bbb_gaussian"]) for c in (cfgs, base))
        assert {k for k in mine if mine[k] != theirs[k]} == fields, variant
        if "kl_estimator" in fields:
            want = "mc" if variant == "mc_kl_attached" else "mc_detached_mean"
            assert mine["kl_estimator"] == want
        (run,) = EXP.runs("full", variant)
        assert (run.config,) == tuple(r.config for r in EXP.runs("ci", variant))


def test_the_tutorials_lr_decay_divides_adams_lr_by_1_1_every_epoch() -> None:
    cfg = _configs("tutorial_code")["bbb_gaussian"]
    assert cfg.epochs == 20 and cfg.lr == 1e-3
    assert cfg.selection == "last"
    cfg = dataclasses.replace(cfg, hidden=(5,), batch_size=8)
    model = build("bbb_gaussian", hidden=(5,))
    seen: list[float] = []  # Adam's lr at each step: one step per epoch
    step = torch.optim.Adam.step

    def spy(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        seen.append(self.param_groups[0]["lr"])
        return step(self, *args, **kwargs)

    split = Split(torch.rand(8, 1, 6, 7, generator=seeded(0)), torch.arange(8) % 7)
    none = Split(split.x[:0], split.y[:0])  # no validation: selection="last" keeps the last
    data = DataBundle("toy", split, none, split, 7, "toy", "toy")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(torch.optim.Adam, "step", spy)
        fit(model, cfg, data, name="bbb_gaussian", generator=seeded(1), progress=False)
    assert seen == pytest.approx([1e-3 / 1.1**k for k in range(20)], rel=1e-12)
