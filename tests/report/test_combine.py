"""`robustbnn report A B ...` combines seeds of one configuration only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from robustbnn.cli import main
from robustbnn.report.combine import CombineError, check_seeds_of_one_configuration, configuration
from robustbnn.results.store import write_json

from ._runs import rows, write_run


def _run(tmp_path: Path, name: str, *, seed: int, **config: object) -> Path:
    """A run folder of model ``m`` whose run.json records ``config`` (plus the seed)."""
    run = write_run(tmp_path / name, rows("m", seed=seed, acc=0.5 + seed / 10), seed=seed)
    write_json(run / "run.json", {"seed": seed, "suite": "test", "device": "cpu",
                                  "data": {"fingerprint": config.pop("fingerprint", "abc")},
                                  "config": {"seed": seed, "ood_preprocessing": "unit",
                                             "models": ["m"], **config}})
    return run


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


def test_seeds_of_one_configuration_combine(tmp_path: Path) -> None:
    runs = [_run(tmp_path, f"s{s}", seed=s) for s in (0, 1, 2)]
    assert main(["report", "--quiet", *map(str, runs), "--out", str(tmp_path / "all"),
                 "--no-figures"]) == 0
    md = (tmp_path / "all" / "leaderboard.md").read_text()
    assert "Mean over 3 runs (seeds [0, 1, 2]), with its 95% interval" in md


def test_unrelated_runs_are_refused_naming_the_fields(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Four runs of seed 0 that differ in their models, data and an override: the report the
    # issue saw averaged them as "4 runs (seeds [0, 0, 0, 0])".
    runs = [_run(tmp_path, "a", seed=0),
            _run(tmp_path, "b", seed=0, models=["m", "x"]),
            _run(tmp_path, "c", seed=0, fingerprint="def"),
            _run(tmp_path, "d", seed=0, overrides=["m.epochs=3"])]
    out = tmp_path / "all"
    assert main(["report", *map(str, runs), "--out", str(out), "--no-figures"]) == 2
    line = _error(capsys)
    a, b, c, d = runs  # every run's difference is named, not only the first pair's
    assert line == (f"robustbnn: error: 4 runs were given to combine as mean ± std, but they "
                    f"are not seeds of one configuration: they differ in 3 field(s) besides the "
                    f"seed, config.models: [\"m\"] in {a}, {c}, {d} / [\"m\", \"x\"] in {b}; "
                    f"config.overrides: absent in {a}, {b}, {c} / [\"m.epochs=3\"] in {d}; "
                    f"data.fingerprint: \"abc\" in {a}, {b}, {d} / \"def\" in {c}; "
                    "report each run alone, or combine runs of the same command that differ "
                    "only in --seed")
    assert not (out / "leaderboard.md").exists()  # refused before anything is rendered


def test_three_runs_name_every_run_s_difference_not_only_the_first_pair_s(
        tmp_path: Path) -> None:
    # b differs from a in n_train, c in its data: each is named, with the run it comes from.
    a, b, c = (_run(tmp_path, "a", seed=0), _run(tmp_path, "b", seed=1, n_train=100),
               _run(tmp_path, "c", seed=2, fingerprint="def"))
    runs = [json.loads((d / "run.json").read_text()) for d in (a, b, c)]
    with pytest.raises(CombineError) as err:
        check_seeds_of_one_configuration(runs, [a, b, c])
    assert ("they differ in 2 field(s) besides the seed, config.n_train: absent in "
            f"{a}, {c} / 100 in {b}; data.fingerprint: \"abc\" in {a}, {b} / \"def\" in {c}; "
            "report each run alone") in str(err.value)


@pytest.mark.parametrize(("change", "field"), [
    ({"fingerprint": "def"}, "data.fingerprint"),
    ({"overrides": ["m.epochs=3"]}, "config.overrides"),
    ({"n_train": 100}, "config.n_train"),
])
def test_each_kind_of_difference_is_named(tmp_path: Path, change: dict, field: str) -> None:
    a, b = _run(tmp_path, "a", seed=0), _run(tmp_path, "b", seed=1, **change)
    runs = [json.loads((d / "run.json").read_text()) for d in (a, b)]
    with pytest.raises(CombineError, match=rf"differ in 1 field\(s\) besides the seed, {field}: "):
        check_seeds_of_one_configuration(runs, [a, b])


def test_a_seed_given_twice_is_refused(tmp_path: Path) -> None:
    a, b = _run(tmp_path, "a", seed=3), _run(tmp_path, "b", seed=3)
    runs = [json.loads((d / "run.json").read_text()) for d in (a, b)]
    with pytest.raises(CombineError, match=rf"^{a} and {b} are both seed 3 of one configuration"):
        check_seeds_of_one_configuration(runs, [a, b])


def test_the_seed_and_provenance_may_differ() -> None:
    a = {"seed": 0, "device": "cpu", "git_sha": "1", "config": {"seed": 0, "models": ["m"]}}
    b = {"seed": 1, "device": "cpu", "git_sha": "2", "config": {"seed": 1, "models": ["m"]}}
    assert configuration(a) == configuration(b)
    check_seeds_of_one_configuration([a, b], [Path("a"), Path("b")])


def test_later_seeds_may_leave_out_the_fidelity_reference_but_nothing_else() -> None:
    config = {"fidelity_reference": "hmc"}
    a = {"seed": 0, "config": {"seed": 0, "models": ["hmc", "mlp"], **config}}
    b = {"seed": 1, "config": {"seed": 1, "models": ["mlp"], **config}}
    check_seeds_of_one_configuration([a, b], [Path("s0"), Path("s1")])
    c = {"seed": 2, "config": {"seed": 2, "models": ["hmc"], **config}}
    with pytest.raises(CombineError, match="config.models"):
        check_seeds_of_one_configuration([a, c], [Path("s0"), Path("s2")])
    plain = [{**r, "config": {k: v for k, v in r["config"].items() if k != "fidelity_reference"}}
             for r in (a, b)]
    with pytest.raises(CombineError, match="config.models"):
        check_seeds_of_one_configuration(plain, [Path("s0"), Path("s1")])


def test_a_field_added_later_at_its_default_equals_its_absence() -> None:
    old = {"seed": 0, "config": {"seed": 0, "models": ["m"]}}
    new = {"seed": 1, "config": {"seed": 1, "models": ["m"], "fidelity_reference": "",
                                 "fidelity_seed": 0, "fidelity_samples": 800}}
    check_seeds_of_one_configuration([old, new], [Path("s0"), Path("s1")])
    other = {"seed": 2, "config": {**new["config"], "seed": 2, "fidelity_samples": 100}}
    with pytest.raises(CombineError, match="config.fidelity_samples"):
        check_seeds_of_one_configuration([old, other], [Path("s0"), Path("s2")])
