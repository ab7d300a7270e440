"""The contract kit (``robustbnn.testing``, ``robustbnn check``) fails each broken clause by
name, and passes a model that keeps the contract."""

from __future__ import annotations

import importlib
import sys

import pytest
import torch

from robustbnn.cli import main
from robustbnn.errors import ModelContractError
from robustbnn.models import MODELS
from robustbnn.testing import CLAUSES, CheckOptions, check_model, check_module, smoke_config

PLUGIN = "tests.plugins.bad_models"

BROKEN = {  # model in tests/plugins/bad_models.py -> the clause it breaks
    "bad_samples_last": "shape",  # returns (B, S, C)
    "bad_seeds_global_rng": "global_rng",  # reproducible, but reseeds torch's global RNG
    "bad_ignores_generator": "reproducible",  # torch.randn without the generator
    "bad_fixed_seed": "variation",  # draws from its own generator, seeded alike every call
    "bad_noise_only_in_train": "train_eval",  # eval() switches sampling off
    "bad_counts_calls": "state_unchanged",  # increments a buffer while sampling
    "bad_detached": "input_gradient",  # .detach() on the logits
    "bad_detached_input": "input_gradient",  # x.detach() before the first layer
    "bad_probabilities": "logits",  # softmax probabilities instead of logits
    "bad_global_init": "build",  # initialises from the global RNG, not build's generator
    "bad_state_outside_buffers": "cache_round_trip",  # after_fit's result in an attribute
    "bad_attack_samples_last": "attack_logits",  # attack_logits returns (B, S, C)
}

ALSO = {  # what else legitimately fails, as a consequence of the same bug
    "bad_samples_last": {"fit", "loss"},  # the default loss takes sample 0 of the first axis
    "bad_ignores_generator": {"train_eval", "global_rng", "cache_round_trip"},
    "bad_noise_only_in_train": {"variation"},  # the checks sample in eval(), as the harness does
    "bad_detached": {"fit", "loss"},  # the default loss goes through sample_logits
}


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch):
    """A registry sandbox and fresh plug-in imports, so nothing registered here leaks out."""
    for module in (PLUGIN, "tests.plugins.toy_plugin"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    with MODELS.sandbox():
        yield


@pytest.fixture
def bad_models(plugins):  # noqa: ANN201
    return importlib.import_module(PLUGIN)


def test_the_plugin_breaks_the_clauses_listed_here(bad_models) -> None:  # noqa: ANN001
    assert {name: clause for name, (_, clause) in bad_models.BAD.items()} == BROKEN


@pytest.mark.bench
@pytest.mark.parametrize("name", BROKEN)
def test_each_broken_clause_fails_by_name(bad_models, name: str) -> None:  # noqa: ANN001
    report = check_model(name)
    assert {r.clause for r in report.failed} == {BROKEN[name], *ALSO.get(name, ())}
    error = report.result(BROKEN[name]).error
    assert isinstance(error, ModelContractError) and isinstance(error, ValueError)
    assert str(error).startswith(f"model {name!r}: clause {BROKEN[name]!r} failed: ")
    with pytest.raises(ModelContractError, match=f"model '{name}': clause '{BROKEN[name]}'"):
        report.raise_if_failed()


@pytest.mark.bench
def test_messages_say_what_was_seen(bad_models) -> None:  # noqa: ANN001
    def detail(name: str) -> str:
        return check_model(name).result(BROKEN[name]).detail

    assert "(5, 3, 7)" in detail("bad_samples_last") and "samples last" in detail(
        "bad_samples_last")
    assert "torch's global CPU RNG" in detail("bad_seeds_global_rng")
    assert "generators seeded alike differ" in detail("bad_ignores_generator")
    assert "ignores its generator" in detail("bad_fixed_seed")
    assert "train() and eval()" in detail("bad_noise_only_in_train")
    assert "'calls'" in detail("bad_counts_calls")
    assert "do not require grad" in detail("bad_detached")
    assert "attack_logits(x, 3)" in detail("bad_attack_samples_last")
    assert "parameters or buffers" in detail("bad_state_outside_buffers")


@pytest.mark.bench
def test_a_global_rng_model_is_not_blamed_on_modes_or_buffers(bad_models) -> None:  # noqa: ANN001
    report = check_model("bad_ignores_generator")
    for clause in ("train_eval", "cache_round_trip"):
        detail = report.result(clause).detail
        assert "generators seeded alike already differ" in detail, detail
        assert "torch's global RNG" in detail and "thread the generator" in detail
        assert "self.training" not in detail and "buffers" not in detail
    # The genuine cases keep their messages.
    assert "self.training" in check_model("bad_noise_only_in_train").result("train_eval").detail
    assert "buffers" in check_model("bad_state_outside_buffers").result(
        "cache_round_trip").detail


@pytest.mark.bench
def test_probabilities_are_refused_by_the_logits_clause(bad_models) -> None:  # noqa: ANN001
    detail = check_model("bad_probabilities").result("logits").detail
    assert detail.startswith("returns probabilities, not logits: every row of its (3, 5, 7) "
                             "output is non-negative and sums to 1")
    assert detail.endswith("return the unnormalised scores (the harness applies softmax)")
    assert check_model("contract_ok").result("logits").status == "ok"


def test_check_warns_once_about_a_missing_smoke_size(
        plugins, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    assert main(["check", "--plugin", PLUGIN, "--device", "cpu", "contract_ok"]) == 0
    err = capsys.readouterr().err.splitlines()
    warned = [line for line in err if "declares no 'smoke' budget" in line]
    assert warned == ["model contract_ok declares no 'smoke' budget in its ModelSpec.shrink, "
                      "so it runs at its full default size; declare one (e.g. "
                      "ModelSpec(..., shrink={'smoke': {'epochs': 2}}))"]
    assert main(["check", "--device", "cpu", "-q", "mlp"]) == 0  # mlp declares one
    assert "declares no" not in capsys.readouterr().err


def test_a_model_that_does_not_build_skips_the_rest(bad_models) -> None:  # noqa: ANN001
    report = check_model("bad_global_init")
    assert [r.status for r in report.results] == ["failed"] + ["skipped"] * (len(CLAUSES) - 1)


def test_a_model_keeping_the_contract_passes(bad_models) -> None:  # noqa: ANN001
    report = check_model("contract_ok").raise_if_failed()
    assert [r.clause for r in report.results] == list(CLAUSES)
    assert report.result("attack_logits").status == "skipped"  # it has none


def test_checking_leaves_the_caller_as_it_was(bad_models) -> None:  # noqa: ANN001
    state = torch.get_rng_state()
    check_model("bad_ignores_generator")  # draws from (and advances) the global RNG
    assert torch.equal(torch.get_rng_state(), state)
    model = MODELS.get("bad_counts_calls").build(smoke_config("bad_counts_calls"), (1, 6, 7), 7,
                                                 torch.Generator().manual_seed(0))
    model.eval()
    report = check_module(model, MODELS.get("bad_counts_calls"), name="bad_counts_calls",
                          config=smoke_config("bad_counts_calls"),
                          options=CheckOptions(input_shape=(1, 6, 7)))
    assert "build" not in {r.clause for r in report.results}
    assert not model.training and model.calls.item() == 0  # its state is restored


def test_cuda_without_cuda_is_a_device_error() -> None:
    if torch.cuda.is_available():
        pytest.skip("CUDA is available")
    with pytest.raises(Exception, match="CUDA is not available"):
        check_model("mlp", options=CheckOptions(device="cuda"))


@pytest.mark.bench
def test_cli_fails_each_broken_model_naming_the_clause(
        plugins, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    assert main(["check", "--plugin", PLUGIN, "--device", "cpu", *BROKEN]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == len(BROKEN) * len(CLAUSES) + 1
    for name, clause in BROKEN.items():
        line = next(line for line in out if line.split()[:2] == [name, clause])
        assert line.split()[2] == "FAILED:", line
    assert out[-1].startswith(f"checked {len(BROKEN)} model(s) on cpu: ")
    assert "bad_samples_last.shape" in out[-1]


def test_cli_passes_the_readme_plugin(plugins, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    assert main(["check", "--plugin", "tests.plugins.toy_plugin", "--device", "cpu",
                 "toy_ensemble"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[1] for line in out[:-1]] == list(CLAUSES)
    assert all(line.split()[2] in ("ok", "skipped:") for line in out[:-1]), out
    assert out[-1] == "checked 1 model(s) on cpu: every clause passed"


def test_cli_passes_a_builtin_and_is_quiet_with_q(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "mlp", "--device", "cpu", "-q"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"mlp  {c:<17} ok" for c in CLAUSES]


def test_cli_unknown_model_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "mlp", "no_such_model"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # nothing is checked before every name is known
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("robustbnn: error: unknown model "
                                               "'no_such_model'; known: [")
