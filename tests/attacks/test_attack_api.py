"""The attack API: settings resolved once (``--set`` for attacks), the budget the harness
enforces, the attack kit (``robustbnn check --attack``), the legend and the L2 PGD example."""

from __future__ import annotations

import dataclasses
import json
import pickle
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pandas as pd
import pytest
import torch

from robustbnn.attacks import ATTACKS
from robustbnn.attacks.base import Attack
from robustbnn.attacks.budget import check_budget
from robustbnn.bench import check_bench
from robustbnn.cli import main
from robustbnn.config import PROBABILITY, Range
from robustbnn.errors import AttackBudgetError, ConfigError
from robustbnn.report.legend import legend
from robustbnn.results.schema import Result, setting
from robustbnn.run.context import RunSpec
from robustbnn.run.plan import build_plan
from robustbnn.settings import resolve_settings
from robustbnn.suites import SUITES
from robustbnn.testing.attack import ATTACK_CLAUSES, check_attack


@dataclasses.dataclass(frozen=True)
class MIFGSM(Attack):
    """A stand-in for a plug-in momentum attack: one setting with a range."""

    eps: float = 0.1
    n_samples: int = 1
    decay: float = 1.0

    eps_grid: ClassVar[tuple[float, ...]] = (0.05, 0.2)
    ranges: ClassVar[dict[str, Range]] = {"decay": PROBABILITY}

    def __call__(self, model, x, y, *, generator=None):  # noqa: ANN001, ANN204, D102
        return x


@pytest.fixture
def mifgsm() -> Iterator[str]:
    with ATTACKS.temporary("mifgsm", MIFGSM):
        yield "mifgsm"


@pytest.fixture
def fresh_plugins(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test imports its plug-ins itself and leaves the registry as it found it."""
    for module in ("tests.plugins.bad_attacks", "examples.l2_pgd_plugin"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    with ATTACKS.sandbox():
        yield


# --- the budget --------------------------------------------------------------------------

def test_budget_accepts_the_ball_and_refuses_what_leaves_it() -> None:
    x = torch.full((3, 1, 2, 2), 0.5)
    check_budget(x, x + 0.1, 0.1, "linf", attack="a")
    l2 = torch.zeros_like(x)
    l2[:, 0, 0, 0] = 0.3
    l2[:, 0, 1, 1] = 0.4  # L2 norm 0.5, L-inf 0.4
    check_budget(x, x + l2, 0.5, "l2", attack="a")
    with pytest.raises(AttackBudgetError) as info:
        check_budget(x, x + l2, 0.45, "l2", attack="wide")
    assert str(info.value) == (
        "attack 'wide' left its L2 ball of eps=0.45: example 0 is at distance 0.5; keep "
        "||x_adv - x|| <= eps (project onto the ball) and x_adv in [0, 1]")
    over = x.clone()
    over[2] = 0.8
    with pytest.raises(AttackBudgetError, match="example 2 is at distance 0.3"):
        check_budget(x, over, 0.1, "linf", attack="a")
    with pytest.raises(AttackBudgetError, match=r"'a' left the \[0, 1\] box: example 1 has a "
                                                r"value 1.05"):
        check_budget(x, torch.stack([x[0], x[1] + 0.55, x[2]]), None, "linf", attack="a")
    check_budget(x, x + 0.55, None, "linf", attack="a", box=False)  # BHN's unclipped FGSM


def test_budget_error_survives_pickling_and_is_not_retried() -> None:
    err = AttackBudgetError("attack 'a' left its L∞ ball")
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is AttackBudgetError and str(again) == str(err)


# --- settings resolved once --------------------------------------------------------------

def test_pgd_defaults_are_the_suite_fields_and_set_changes_them() -> None:
    cfg = SUITES.get("smoke")
    pgd = resolve_settings(cfg).attack("pgd")
    assert (pgd.attack.steps, pgd.attack.step_size, pgd.attack.restarts,
            pgd.attack.objective, pgd.attack.label) == (
        cfg.pgd_steps, cfg.pgd_step_size, cfg.pgd_restarts, cfg.pgd_objective, cfg.attack_label)
    assert (pgd.eps, pgd.s_attack, pgd.norm) == (cfg.pgd_eps, cfg.pgd_s_attack, "linf")
    user = ("pgd.steps=100", "pgd.eps=(0.2,)")
    cfg = check_bench(dataclasses.replace(cfg, overrides=(*cfg.overrides, *user)), user)
    pgd = resolve_settings(cfg).attack("pgd")
    assert pgd.attack.steps == 100 and pgd.eps == (0.2,)
    with pytest.raises(ConfigError, match=r"pgd.steps: expected int, got 1.5"):
        resolve_settings(dataclasses.replace(cfg, overrides=("pgd.steps=1.5",)))


def test_plugin_attack_settings_are_typed_and_range_checked(mifgsm: str) -> None:
    cfg = dataclasses.replace(SUITES.get("smoke"), attacks=("pgd", mifgsm))
    user = ("mifgsm.decay=0.5",)
    cfg = check_bench(dataclasses.replace(cfg, overrides=(*cfg.overrides, *user)), user)
    resolved = resolve_settings(cfg).attack(mifgsm)
    assert resolved.settings == {"decay": 0.5} and resolved.eps == (0.05, 0.2)
    bad = ("mifgsm.decay=1.5",)
    with pytest.raises(ConfigError) as info:
        check_bench(dataclasses.replace(cfg, overrides=bad), bad)
    assert str(info.value) == ("mifgsm.decay=1.5 is out of range: decay must be in [0, 1]; "
                               "set another value with --set mifgsm.decay=...")


def test_an_unknown_owner_lists_models_and_attacks(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--suite", "smoke", "--set", "nope.decay=0.5", "--print-config"]) == 2
    err = capsys.readouterr().err
    assert "unknown model or attack 'nope'" in err and "'mc_dropout'" in err and "'pgd'" in err


def test_set_on_an_attack_outside_the_run_names_the_flag(mifgsm: str) -> None:
    user = ("mifgsm.decay=0.5",)
    cfg = SUITES.get("smoke")
    with pytest.raises(ConfigError, match=r"attack 'mifgsm' is not in this run's attacks"):
        check_bench(dataclasses.replace(cfg, overrides=user), user)


def test_print_config_shows_attack_configs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--suite", "smoke", "--set", "pgd.steps=7", "--print-config"]) == 0
    attack_configs = json.loads(capsys.readouterr().out)["attack_configs"]
    assert attack_configs["pgd"]["steps"] == 7 and attack_configs["pgd"]["norm"] == "linf"


def _plan(cfg):  # noqa: ANN001, ANN202
    cfg = check_bench(cfg)
    return build_plan(RunSpec(cfg=cfg, data_root=None, download=False, device="cpu",
                              cache_dir="", settings=resolve_settings(cfg)))


def test_pgd_cells_keep_their_former_params_so_their_ids(mifgsm: str) -> None:
    cfg = dataclasses.replace(SUITES.get("smoke"), models=("mlp",), attacks=("pgd", mifgsm),
                              robustness=(), shift=())
    cells = [c for c in _plan(cfg).cells if c.task == "attack"]
    former = [{"attack": "pgd", "eps": float(eps), "S_attack": s, "steps": cfg.pgd_steps,
               "restarts": cfg.pgd_restarts, "step_size": cfg.pgd_step_size,
               "objective": cfg.pgd_objective, "label": cfg.attack_label, "n": cfg.n_pgd,
               "S_eval": cfg.s_eval, "memory_mb": cfg.memory_mb}
              for eps in cfg.pgd_eps for s in cfg.pgd_s_attack]
    assert [c.params for c in cells if c.params["attack"] == "pgd"] == former
    plug = [c.params for c in cells if c.params["attack"] == mifgsm]
    assert [p["eps"] for p in plug] == [0.05, 0.2]  # its own grid, not pgd_eps
    assert all(p["norm"] == "linf" and p["settings"] == {"decay": 1.0} for p in plug)
    assert "steps" not in plug[0]


# --- the legend --------------------------------------------------------------------------

def test_legend_shows_only_an_attacks_fields_and_its_norm() -> None:
    rows = [Result("m", 0, "pgd_l2", "mnist5k", setting(eps=e, S_attack=1, S_eval=2, norm="l2",
                                                         decay=0.5, n=10), "", "accuracy", 0.5)
            for e in (0.5, 1.0)]
    frame = pd.DataFrame([r.to_json() for r in rows])
    (item,) = [i for i in legend(frame, []) if i.startswith("**pgd_l2")]
    assert "L2 radius ε ∈ {0.5, 1}" in item and "decay = 0.5" in item
    assert "steps" not in item and "objective" not in item and "L∞" not in item


# --- the attack kit ----------------------------------------------------------------------

def test_attack_kit_passes_the_built_in_attacks() -> None:
    for name in ("fgsm", "pgd"):
        report = check_attack(name).raise_if_failed()
        assert [r.clause for r in report.results] == list(ATTACK_CLAUSES)


def test_check_attack_refuses_a_blank_image_attack(fresh_plugins: None,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--plugin", "tests.plugins.bad_attacks", "--attack",
                 "blank_attack"]) == 1
    out = capsys.readouterr().out
    assert "blank_attack  budget          FAILED: AttackBudgetError: attack 'blank_attack' " \
           "left its L∞ ball" in out
    assert "blank_attack  beats_noise     ok" in out  # blank images are wrong everywhere
    assert "1 clause(s) failed: blank_attack.budget" in out


def test_l2_pgd_example_passes_the_kit(fresh_plugins: None,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--plugin", "examples.l2_pgd_plugin", "--attack", "pgd_l2"]) == 0
    assert "every clause passed" in capsys.readouterr().out


# --- through the bench -------------------------------------------------------------------

SMALL = ("--models", "mlp", "--robustness", "none", "--shift", "none", "--ood", "uniform",
         "--jobs", "1", "--quiet", "--no-cache")


@pytest.mark.bench
def test_bench_refuses_attacks_that_leave_their_budget(
        fresh_plugins: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", "--suite", "smoke", "--plugin", "tests.plugins.bad_attacks",
                 "--attacks", "blank_attack,greedy_attack", *SMALL, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1
    assert ("cell 'blank_attack mlp eps=0.1 S=4' failed (AttackBudgetError: attack "
            "'blank_attack' left its L∞ ball of eps=0.1: example 0 is at distance 1;") in err
    assert ("cell 'greedy_attack mlp eps=0.3 S=4' failed (AttackBudgetError: attack "
            "'greedy_attack' left its L∞ ball of eps=0.3: example 0 is at distance 0.6;") in err
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert not {r["task"] for r in rows} & {"blank_attack", "greedy_attack"}


@pytest.mark.bench
def test_l2_pgd_example_runs_through_the_smoke_suite(fresh_plugins: None,
                                                     tmp_path: Path) -> None:
    assert main(["bench", "--suite", "smoke", "--plugin", "examples.l2_pgd_plugin",
                 "--attacks", "pgd_l2", "--set", "pgd_l2.steps=3", *SMALL,
                 "--out", str(tmp_path)]) == 0
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    acc = {r["setting"]["eps"]: r["value"] for r in rows
           if r["task"] == "pgd_l2" and r["metric"] == "accuracy"}
    assert sorted(acc) == [0.5, 1.0, 2.0] and acc[2.0] <= acc[0.5]
    assert {r["setting"]["norm"] for r in rows if r["task"] == "pgd_l2"} == {"l2"}
    board = (tmp_path / "leaderboard.md").read_text()
    assert "Plug-in attack `pgd_l2`: L2 radius ε ∈ {0.5, 1, 2}, 3 steps of size 0.25" in board
