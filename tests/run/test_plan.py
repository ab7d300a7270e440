"""The plan of cells: identities, dependencies, ``--plan``, attacks from the registry."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from robustbnn.bench import BenchOptions, check_bench, make_spec
from robustbnn.cli import main
from robustbnn.run.cells import Cell
from robustbnn.run.plan import build_plan
from robustbnn.suites import SUITES


def _plan(**changes: object):
    cfg = check_bench(dataclasses.replace(SUITES.get("smoke"), **changes))
    return build_plan(make_spec(cfg, BenchOptions(out_dir=Path("unused"))))


def test_cell_id_hashes_task_params_and_dependencies() -> None:
    a = Cell("fgsm", "mlp", {"S_attack": 1, "eps_grid": [0.1]}, ("x",))
    assert a.id == Cell("fgsm", "mlp", {"eps_grid": [0.1], "S_attack": 1}, ("x",), "label").id
    assert a.id != Cell("fgsm", "mlp", {"S_attack": 32, "eps_grid": [0.1]}, ("x",)).id
    assert a.id != Cell("fgsm", "mlp", {"S_attack": 1, "eps_grid": [0.1]}, ("y",)).id
    assert a.id != Cell("fgsm", "mc_dropout", {"S_attack": 1, "eps_grid": [0.1]}, ("x",)).id
    assert len(a.id) == 20 and int(a.id, 16) >= 0


@pytest.mark.bench
def test_smoke_plan_orders_dependencies_first_and_covers_every_task() -> None:
    plan = _plan()
    seen: set[str] = set()
    for cell in plan.cells:
        assert set(cell.deps) <= seen, f"{cell.label} runs before what it depends on"
        seen.add(cell.id)
    assert len(seen) == len(plan.cells), "two cells share an id"
    tasks = [c.task for c in plan.cells if c.model == "mlp"]
    # the model contract, train, clean, fgsm + sanity per S_attack (1, 32), targeted, pgd per
    # eps (0.1, 0.3), 3 OOD
    # then the robustness cells: budget per eps (0.1, 0.3), detector-aware at 0.1, and
    # adversarial OOD for the run's sets among adv_ood_sets (uniform, glyphs), then one shift
    # cell per kind (rotated, corrupted)
    assert tasks == ["contract", "train", "clean", "fgsm", "sanity", "fgsm", "sanity",
                     "targeted", "attack", "attack", "budget", "budget", "detector_aware",
                     "ood", "ood", "ood", "adv_ood", "adv_ood", "shift", "shift"]


@pytest.mark.bench
def test_robustness_cells_read_the_clean_scores_and_know_deterministic_models() -> None:
    plan = _plan()
    by_id = plan.by_id()
    for cell in plan.cells:
        if cell.task in ("budget", "detector_aware", "adv_ood"):
            assert [by_id[d].task for d in cell.deps] == ["train", "clean"]
    budget = {c.model: c.params for c in plan.cells if c.task == "budget"}
    assert budget["mlp"]["stochastic"] is False and budget["mc_dropout"]["stochastic"] is True
    adaptive = {c.model: c.params["S_attack"] for c in plan.cells if c.task == "detector_aware"}
    assert adaptive == {"mlp": 1, "mc_dropout": 2}  # one network needs one sample
    none = _plan(robustness=())
    assert not {"budget", "detector_aware", "adv_ood"} & {c.task for c in none.cells}
    only_ood = _plan(robustness=("adversarial_ood",), ood=("gaussian",))
    assert "adv_ood" not in {c.task for c in only_ood.cells}  # gaussian is not in adv_ood_sets


@pytest.mark.bench
def test_a_setting_change_changes_only_the_cells_downstream_of_it() -> None:
    base = {c.label: c.id for c in _plan().cells}
    more_eps = {c.label: c.id for c in _plan(eps=(0.1, 0.2, 0.3)).cells}
    changed = sorted(label for label in base if base[label] != more_eps[label])
    assert changed == ["fgsm mc_dropout S=1", "fgsm mc_dropout S=32", "fgsm mlp S=1",
                       "fgsm mlp S=32"]
    other_seed = {c.label: c.id for c in _plan(seed=1).cells}
    gates = {label for label in base if label.startswith("contract ")}
    assert all(base[label] != other_seed[label] for label in base if label not in gates)
    # The contract checks at fixed seeds: one check of a model config serves every seed.
    assert gates and all(base[label] == other_seed[label] for label in gates)


@pytest.mark.bench
def test_attacks_come_from_the_registry() -> None:
    plan = _plan(attacks=("pgd",), robustness=(), shift=())
    assert {c.task for c in plan.cells} == {"contract", "train", "clean", "attack", "ood"}
    assert {c.params["attack"] for c in plan.cells if c.task == "attack"} == {"pgd"}


def test_unknown_attack_is_one_line_before_any_work(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", "--suite", "smoke", "--attacks", "fgsm,nope", "--out",
                 str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "unknown attack 'nope'" in err[0] and "'pgd'" in err[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.bench
def test_plan_option_prints_cells_and_runs_nothing(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["bench", "--suite", "smoke", "--plan", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    lines = text.strip().splitlines()
    assert lines[-1] == "40 cells: 0 done, 40 to run"  # 19 per model and its contract
    assert any("train mlp" in line and "todo" in line for line in lines)
    assert not out.exists()


@pytest.mark.bench
def test_val_in_distribution_adds_one_indist_cell_per_model_that_ood_cells_use() -> None:
    plan = _plan(ood_in_split="val", ood=("uniform", "gaussian"),
                 ood_counts=(("gaussian", 30),))
    by_id = plan.by_id()
    for model in ("mlp", "mc_dropout"):
        indist = [c for c in plan.cells if c.task == "indist" and c.model == model]
        assert len(indist) == 1 and indist[0].params["split"] == "val"
        for ood in (c for c in plan.cells if c.task == "ood" and c.model == model):
            assert indist[0].id in ood.deps
            assert {by_id[d].task for d in ood.deps} == {"train", "indist"}
    counts = {c.params["set"]: c.params["n_ood"] for c in plan.cells if c.task == "ood"}
    assert counts == {"uniform": 200, "gaussian": 30}
    assert not [c for c in _plan().cells if c.task == "indist"]


def test_bad_in_split_and_counts_are_one_line_errors() -> None:
    from robustbnn.errors import ConfigError

    with pytest.raises(ConfigError, match="ood_in_split must be one of \\['test', 'val'\\]"):
        _plan(ood_in_split="train")
    with pytest.raises(ConfigError, match="ood_counts names sets the run does not score: "
                                          "\\['notmnist'\\]"):
        _plan(ood_counts=(("notmnist", 1000),))
    with pytest.raises(ConfigError, match=r"unknown robustness cell kind\(s\) \['budgets'\]; "
                       r"known: \['budget', 'detector_aware', 'adversarial_ood'\]"):
        _plan(robustness=("budgets",))


@pytest.mark.bench
def test_robustness_option_selects_cells_and_names_a_typo(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "out")
    assert main(["bench", "--suite", "smoke", "--robustness", "none", "--plan", "--out", out]) == 0
    assert "budget" not in capsys.readouterr().out
    assert main(["bench", "--suite", "smoke", "--robustness", "budget", "--plan",
                 "--out", out]) == 0
    plan = capsys.readouterr().out
    assert "budget mlp eps=0.3" in plan and "detector-aware" not in plan
    assert main(["bench", "--suite", "smoke", "--robustness", "budgetz", "--out", out]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["robustbnn: error: unknown robustness cell kind(s) ['budgetz']; known: "
                   "['budget', 'detector_aware', 'adversarial_ood']"]
    assert not (tmp_path / "out").exists()  # nothing written before the error


@pytest.mark.bench
def test_shift_cells_depend_on_training_only_and_carry_their_levels() -> None:
    from robustbnn.data.shift import CORRUPTIONS, ROTATIONS

    plan = _plan()
    by_id = plan.by_id()
    shift = [c for c in plan.cells if c.task == "shift"]
    assert [(c.model, c.params["shift"]) for c in shift] == [
        ("mlp", "rotated"), ("mlp", "corrupted"), ("mc_dropout", "rotated"),
        ("mc_dropout", "corrupted")]
    for cell in shift:
        assert [by_id[d].task for d in cell.deps] == ["train"]
        assert cell.params["n"] == 40 and cell.params["S_eval"] == 20
    rotated, corrupted = shift[:2]
    assert rotated.params["levels"] == list(ROTATIONS)
    assert corrupted.params["levels"] == list(CORRUPTIONS)
    assert rotated.params["seed"] == 0 and corrupted.params["seed"] == 0
    some = _plan(shift=("corrupted",), shift_corruptions=("fog", "stripe"), shift_seed=5)
    (one, _) = [c for c in some.cells if c.task == "shift"]
    assert one.params["levels"] == ["fog", "stripe"] and one.params["seed"] == 5
    # The whole test split when n_shift is 0 or larger than it; the run seed is not a level.
    assert {c.params["n"] for c in _plan(n_shift=0).cells if c.task == "shift"} == {200}
    assert {c.params["n"] for c in _plan(n_shift=10**6).cells if c.task == "shift"} == {200}
    ids = {c.label: c.id for c in _plan(seed=1).cells if c.task == "shift"}
    assert all(ids[c.label] != c.id for c in shift)  # other seed, other trained model


@pytest.mark.parametrize(("changes", "message"), [
    ({"shift": ("rotatd",)}, "unknown shift kind(s) ['rotatd']; known: ['rotated', "
                             "'corrupted']"),
    ({"shift_corruptions": ("fogg",)}, "unknown MNIST-C corruption 'fogg'; known: ['brightness'"),
    ({"shift_angles": ()}, "shift_angles must list distinct angles, got []"),
    ({"shift_angles": (0, 15, 15)}, "shift_angles names [15] more than once; name each once"),
])
def test_bad_shift_settings_are_one_line_errors(changes: dict, message: str) -> None:
    from robustbnn.errors import UserError

    with pytest.raises(UserError) as err:
        _plan(**changes)
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.bench
def test_shift_option_selects_cells_and_names_a_typo(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "out")
    assert main(["bench", "--suite", "smoke", "--shift", "none", "--plan", "--out", out]) == 0
    assert "shift mlp" not in capsys.readouterr().out
    assert main(["bench", "--suite", "smoke", "--shift", "rotated", "--plan", "--out", out]) == 0
    plan = capsys.readouterr().out
    assert "shift mlp rotated" in plan and "shift mlp corrupted" not in plan
    assert main(["bench", "--suite", "smoke", "--shift", "rotated,blur", "--out", out]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["robustbnn: error: unknown shift kind(s) ['blur']; known: ['rotated', "
                   "'corrupted']"]
    assert not (tmp_path / "out").exists()
