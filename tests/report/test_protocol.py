"""Published-protocol matching reads the model configs a run recorded in ``run.json``."""

from __future__ import annotations

from robustbnn.report.protocol import recorded_model_config, run_fields
from robustbnn.report.published import Entry, differences
from robustbnn.reproduce import Compare, Experiment, Run
from robustbnn.reproduce.report import RunResults, compare_frame
from robustbnn.results.schema import Result
from robustbnn.suites import BenchConfig

CFG = BenchConfig(models=("mlp",), overrides=("*.hidden=(16,)",))
RUN_JSON = {"config": {"dataset": "mnist5k"},
            "models": {"mlp": {"config": {"hidden": [32], "epochs": 1}, "cached": False}}}


def test_the_model_fields_are_the_recorded_config() -> None:
    assert recorded_model_config(RUN_JSON, "mlp") == {"hidden": [32], "epochs": 1}
    assert recorded_model_config(RUN_JSON, "bbb") == {}
    assert recorded_model_config({}, "mlp") == {}
    fields = run_fields({"dataset": "mnist5k", "eps": (0.1,)},
                        recorded_model_config(RUN_JSON, "mlp"), {"n": 10})
    assert fields == {"bench.dataset": "mnist5k", "bench.eps": [0.1], "model.hidden": [32],
                      "model.epochs": 1, "setting.n": 10}
    assert differences({"model.hidden": [16]}, fields) == [
        "model.hidden: published [16], this run [32]"]


def test_a_reproduction_compares_what_the_run_recorded_not_what_its_suite_says() -> None:
    entry = Entry("toy", "MLP", "acc", ("mlp",), {"task": "clean", "metric": "accuracy"}, 50.0,
                  {"bench.dataset": "mnist5k", "model.hidden": [16]})
    compare = Compare("MLP", "acc", "main", "mlp", {"task": "clean", "metric": "accuracy"},
                      entry)
    exp = Experiment("toy", "A toy", "nothing", lambda budget, variant: (Run("main", CFG),),
                     lambda variant: (compare,), {"only": "the one variant"})
    row = Result("mlp", 0, "clean", "mnist5k", {}, "", "accuracy", 0.5)

    recorded = compare_frame(exp, "only", [RunResults("main", 0, CFG, [row], RUN_JSON)])
    assert recorded.loc[0, "differs"] == "model.hidden: published [16], this run [32]"
    assert recorded.loc[0, "delta"] != recorded.loc[0, "delta"]  # NaN: not the protocol

    as_declared = {"models": {"mlp": {"config": {"hidden": [16]}}}}
    frame = compare_frame(exp, "only", [RunResults("main", 0, CFG, [row], as_declared)])
    assert frame.loc[0, "differs"] == "" and frame.loc[0, "delta"] == 0.0
