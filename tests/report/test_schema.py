"""Structured settings: typed knobs, their label for people, the JSON row and knob columns."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robustbnn.results.schema import MissingKnobError, Result, setting, setting_label, with_knobs
from robustbnn.results.store import results_frame


def _row(**knobs: object) -> Result:
    return Result("m", 0, "fgsm", "toy", setting(**knobs), "", "accuracy", 0.5)


def test_setting_keeps_order_and_converts_numpy_scalars() -> None:
    knobs = setting(eps=np.float32(0.25), S_attack=np.int64(32), clip=np.bool_(True),
                    objective="expected")
    assert list(knobs) == ["eps", "S_attack", "clip", "objective"]
    assert knobs == {"eps": 0.25, "S_attack": 32, "clip": True, "objective": "expected"}
    assert [type(v) for v in knobs.values()] == [float, int, bool, str]


@pytest.mark.parametrize("bad", [[0.1], None, {"a": 1}, np.zeros(2)])
def test_setting_refuses_other_values_naming_the_knob(bad: object) -> None:
    with pytest.raises(TypeError, match="knob 'eps'"):
        setting(S_attack=1, eps=bad)


def test_setting_label_is_the_people_readable_form() -> None:
    knobs = setting(eps=0.1, S_attack=32, step_size=1e-05, clip=True, objective="expected")
    label = "eps=0.1;S_attack=32;step_size=1e-05;clip=True;objective=expected"
    assert setting_label(knobs) == label
    assert setting_label(setting(eps=0.30000000000000004)) == "eps=0.3"  # floats with :g
    assert setting_label({}) == ""


def test_a_result_refuses_a_string_setting() -> None:
    with pytest.raises(TypeError, match="Result.setting must be a dict"):
        Result("m", 0, "fgsm", "toy", "eps=0.1;S_attack=1", "", "accuracy", 0.5)


def test_json_round_trip_keeps_types_and_order() -> None:
    row = _row(eps=0.1, S_attack=32, clip=True, label="true", n=500)
    back = Result.from_json(row.to_json())
    assert back == row
    assert list(back.setting) == ["eps", "S_attack", "clip", "label", "n"]
    assert [type(v) for v in back.setting.values()] == [float, int, bool, str, int]
    assert type(back.seed) is int and type(back.value) is float


@pytest.mark.parametrize(("field", "bad"), [
    ("setting", "eps=0.1"), ("setting", {"eps": [0.1]}), ("seed", "0"), ("seed", True),
    ("value", "0.5"), ("value", None), ("model", 3), ("metric", None)])
def test_from_json_names_the_bad_field(field: str, bad: object) -> None:
    with pytest.raises(ValueError, match=f"'{field}'"):
        Result.from_json({**_row(eps=0.1).to_json(), field: bad})


def test_from_json_names_missing_and_unknown_fields() -> None:
    payload = _row(eps=0.1).to_json()
    with pytest.raises(ValueError, match="'measure' is missing"):
        Result.from_json({k: v for k, v in payload.items() if k != "measure"})
    with pytest.raises(ValueError, match="unknown field.*'extra'"):
        Result.from_json({**payload, "extra": 1})
    with pytest.raises(ValueError, match="must be a JSON object"):
        Result.from_json([1, 2])


def test_with_knobs_adds_numeric_columns_as_float_and_text_as_object() -> None:
    frame = results_frame([_row(eps=0.1, S_attack=1, objective="expected"),
                           _row(eps=0.3, objective="predictive")])
    out = with_knobs(frame, "eps", "S_attack", "objective")
    assert out["eps"].tolist() == [0.1, 0.3] and out["eps"].dtype == "float64"
    assert out["S_attack"].iloc[0] == 1.0 and math.isnan(out["S_attack"].iloc[1])
    assert out["objective"].tolist() == ["expected", "predictive"]
    assert "eps" not in frame  # a copy, not the caller's frame


def test_with_knobs_raises_when_no_row_has_the_knob() -> None:
    frame = results_frame([_row(epsilon=0.1, S_attack=1), _row(epsilon=0.3, S_attack=1)])
    with pytest.raises(MissingKnobError) as err:
        with_knobs(frame, "S_attack", "eps")
    message = str(err.value)
    assert "'eps'" in message and "['fgsm']" in message and "['S_attack', 'epsilon']" in message
    assert with_knobs(frame.iloc[:0], "eps").empty  # no rows: nothing is missing
