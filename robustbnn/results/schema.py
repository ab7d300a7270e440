"""The tidy result record, its JSON form, and the direction of every metric (stated once, here).

A result's ``setting`` is data: a dict of protocol knobs (``{"eps": 0.1, "S_attack": 32}``),
stored as a JSON object in ``results.jsonl``. :func:`setting_label` renders it for people
(``results.csv``); nothing parses that string back.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping

import numpy as np
import pandas as pd

from robustbnn.errors import UserError
from robustbnn.results import names as n

__all__ = ["COLUMNS", "HIGHER_IS_BETTER", "MAY_BE_NAN", "RANGES", "Knob", "MissingKnobError",
           "Result", "attack_tasks", "group_mean", "setting", "setting_label", "text_problem",
           "value_problem", "with_knobs"]

COLUMNS = ("model", "seed", "task", "dataset", "setting", "measure", "metric", "value")

Knob = int | float | str | bool

# True when a larger value is better. The leaderboard sorts by this table.
HIGHER_IS_BETTER: dict[str, bool] = {
    n.ACCURACY: True,
    n.NLL: False,
    n.ECE: False,
    n.BRIER: False,
    n.AUROC: True,
    n.AUPR_IN: True,
    n.AUPR_OUT: True,
    n.FPR_AT_95_TPR: False,
    n.MEAN_UNCERTAINTY: True,
    n.ADVERSARY_DETECTION: True,
    n.ERROR_DETECTION: True,
    n.GRADIENT_NONZERO: True,  # under attack, a model should notice (higher = more uncertain)
    n.SECONDS: False,
    n.TARGET_SUCCESS: False,  # of the targeted attack: lower = more robust
    n.SECONDS_PER_1000_PREDICTIONS: False,
    n.PARAMETERS: False,
    n.EXPECTED_ACCURACY: True,
    n.ALL_K_ACCURACY: True,
    n.FLIP_PROBABILITY: False,
    n.DETECTION_AWARE_ACCURACY: True,
    n.RAISED: False,
    n.AGREEMENT: True,  # with the fidelity reference's predictive
    n.TOTAL_VARIATION: False,
    n.KL_FROM_REFERENCE: False,
    n.P_BETTER: True,
}


# The values a metric can take, both ends included; a value must also be finite. The results
# reader refuses a row outside its metric's range (an accuracy of 5.0 or inf is a damaged file,
# not a number to rank). A metric not listed here takes any float: a plug-in's own metrics,
# ``mean_uncertainty`` (energy scores are unbounded), a robustness flag's ``value``.
RANGES: dict[str, tuple[float, float]] = {
    **dict.fromkeys((n.ACCURACY, n.ECE, n.CONFIDENCE, n.AUROC, n.AUPR_IN, n.AUPR_OUT,
                     n.FPR_AT_95_TPR, n.ADVERSARY_DETECTION, n.ERROR_DETECTION,
                     n.TARGET_SUCCESS, n.EXPECTED_ACCURACY, n.ALL_K_ACCURACY,
                     n.FLIP_PROBABILITY, n.DETECTION_AWARE_ACCURACY, n.PASSED, n.RAISED,
                     n.AGREEMENT, n.TOTAL_VARIATION, n.P_BETTER),
                    (0.0, 1.0)),
    n.BRIER: (0.0, 2.0),  # summed over classes
    **dict.fromkeys((n.NLL, n.COUNT, n.LINF, n.L2, n.PARAMETERS, n.SECONDS,
                     n.SECONDS_PER_1000_PREDICTIONS, n.KL_FROM_REFERENCE), (0.0, math.inf)),
}
# Metrics of RANGES that may be NaN: the flip probability of worst-of-k is undefined for k = 1.
MAY_BE_NAN = frozenset({n.FLIP_PROBABILITY})


def _bound(x: float) -> str:
    return "inf" if x == math.inf else f"{x:g}"


def value_problem(metric: str, value: float) -> str | None:
    """What is wrong with ``value`` for ``metric`` (:data:`RANGES`), or None.

    Example:
        >>> value_problem("accuracy", 5.0)
        'accuracy 5 is outside [0, 1]'
        >>> value_problem("mean_uncertainty", float("nan")) is None
        True
    """
    if metric not in RANGES or (math.isnan(value) and metric in MAY_BE_NAN):
        return None
    lo, hi = RANGES[metric]
    if not math.isfinite(value):
        return f"{metric} {value} is not a finite number"
    if not lo <= value <= hi:
        return f"{metric} {value:g} is outside [{_bound(lo)}, {_bound(hi)}]"
    return None


def text_problem(field: str, text: str) -> str | None:
    r"""What makes ``text`` unwritable (a lone surrogate: no UTF-8 file can hold it), or None.

    Example:
        >>> text_problem("model", "ml\ud800p")
        "field 'model' holds a lone surrogate (U+D800), which no UTF-8 file can hold"
    """
    for char in text:
        if 0xD800 <= ord(char) <= 0xDFFF:
            return (f"field {field!r} holds a lone surrogate (U+{ord(char):04X}), which no "
                    "UTF-8 file can hold")
    return None

def _knob(key: str, value: object) -> Knob:
    """``value`` as a plain Python bool/int/float/str (NumPy scalars converted)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"setting knob {key!r} must be a bool, int, float or str, got "
                    f"{type(value).__name__} {value!r}")


def setting(**knobs: object) -> dict[str, Knob]:
    """The protocol knobs of a result as a new dict, in insertion order.

    Raises:
        TypeError: Naming the knob whose value is not a bool, int, float or str.

    Example:
        >>> setting(eps=np.float32(0.5), S_attack=32, clip=True)
        {'eps': 0.5, 'S_attack': 32, 'clip': True}
    """
    return {key: _knob(key, value) for key, value in knobs.items()}


def setting_label(s: Mapping[str, Knob]) -> str:
    """A setting for people: ``key=value;...`` (floats with ``:g``). Never parsed back.

    Example:
        >>> setting_label(setting(eps=0.1, S_attack=32, clip=True))
        'eps=0.1;S_attack=32;clip=True'
    """
    def fmt(v: Knob) -> str:
        return f"{v:g}" if isinstance(v, float) else str(v)

    return ";".join(f"{k}={fmt(v)}" for k, v in s.items())


@dataclasses.dataclass(frozen=True)
class Result:
    """One measured number: which model, seed, task, data, protocol setting and metric.

    ``setting`` is a dict, so results are not hashable; nothing relies on hashing them.
    """

    model: str
    seed: int
    task: str
    dataset: str
    setting: dict[str, Knob]
    measure: str
    metric: str
    value: float

    def __post_init__(self) -> None:
        """Check the setting (a new dict, knobs as plain Python values); ``value`` as float."""
        if not isinstance(self.setting, Mapping):
            raise TypeError(f"Result.setting must be a dict of knobs (schema.setting(...)), got "
                            f"{type(self.setting).__name__} {self.setting!r}")
        object.__setattr__(self, "setting", setting(**self.setting))
        object.__setattr__(self, "value", float(self.value))

    def to_json(self) -> dict:
        """The row as a JSON-ready dict (``setting`` a nested object, knob order kept)."""
        return {"model": self.model, "seed": int(self.seed), "task": self.task,
                "dataset": self.dataset, "setting": dict(self.setting),
                "measure": self.measure, "metric": self.metric, "value": self.value}

    @classmethod
    def from_json(cls, d: object) -> Result:
        """The row written by :meth:`to_json`, its fields and types checked.

        Raises:
            ValueError: Naming the missing, unknown or mistyped field (or knob).
        """
        if not isinstance(d, dict):
            raise ValueError(f"a result row must be a JSON object, got {type(d).__name__}")
        unknown = sorted(set(d) - set(COLUMNS))
        if unknown:
            raise ValueError(f"unknown field(s) {unknown}; expected {list(COLUMNS)}")
        for field in COLUMNS:
            if field not in d:
                raise ValueError(f"field {field!r} is missing")
        for field in ("model", "task", "dataset", "measure", "metric"):
            if not isinstance(d[field], str):
                raise ValueError(f"field {field!r} must be a string, got {d[field]!r}")
        if isinstance(d["seed"], bool) or not isinstance(d["seed"], int):
            raise ValueError(f"field 'seed' must be an integer, got {d['seed']!r}")
        value = d["value"]
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"field 'value' must be a number, got {value!r}")
        if not isinstance(d["setting"], dict):
            raise ValueError(f"field 'setting' must be an object of knobs, got "
                             f"{type(d['setting']).__name__} {d['setting']!r}")
        try:
            knobs = setting(**d["setting"])
        except TypeError as err:
            raise ValueError(f"field 'setting': {err}") from None
        texts = [(f, d[f]) for f in ("model", "task", "dataset", "measure", "metric")]
        texts += [(f"setting knob {k!r}", k) for k in knobs]
        texts += [(f"setting knob {k!r}", v) for k, v in knobs.items() if isinstance(v, str)]
        for field, text in texts:
            problem = text_problem(field, text)
            if problem:
                raise ValueError(problem)
        return cls(d["model"], d["seed"], d["task"], d["dataset"], knobs, d["measure"],
                   d["metric"], float(value))


class MissingKnobError(UserError, KeyError):
    """A knob a report needs that no row of the task carries (renamed or not recorded)."""

    def __str__(self) -> str:
        """The message itself (``KeyError`` would quote it)."""
        return str(self.args[0])


def with_knobs(rows: pd.DataFrame, *keys: str) -> pd.DataFrame:
    """``rows`` plus one column per knob of ``setting`` (NaN where a row lacks it).

    A column is float when every present value is a number (bools excluded), object otherwise.

    Raises:
        MissingKnobError: If ``rows`` is not empty and no row carries one of ``keys``: a
            leaderboard column must not vanish silently because a knob was renamed.
    """
    out = rows.copy()
    settings = list(rows["setting"])
    for key in keys:
        values = [s.get(key) for s in settings]
        present = [v for v in values if v is not None]
        if settings and not present:
            tasks = sorted(set(rows["task"])) if "task" in rows else []
            found = sorted({k for s in settings for k in s})
            raise MissingKnobError(
                f"no result row of task(s) {tasks} has the setting knob {key!r} a report needs "
                f"(their knobs: {found}); were the results written by another robustbnn "
                "version? rerun robustbnn bench")
        numeric = all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in present)
        if numeric:
            out[key] = pd.Series([math.nan if v is None else float(v) for v in values],
                                 index=rows.index, dtype="float64")
        else:
            out[key] = pd.Series([math.nan if v is None else v for v in values],
                                 index=rows.index, dtype=object)
    return out


def attack_tasks(results: pd.DataFrame) -> list[str]:
    """Attack tasks other than FGSM, in order of appearance (PGD and plug-in attacks).

    An attack task is one whose accuracy rows all carry the ``eps`` and ``S_attack`` knobs;
    the robustness-leaderboard tasks (``names.ROBUSTNESS_TASKS``) have columns of their own.
    """
    acc = results[(results["task"] != n.FGSM) & (results["metric"] == n.ACCURACY)
                  & ~results["task"].isin(n.ROBUSTNESS_TASKS)]
    tasks = []
    for task, rows in acc.groupby("task", sort=False):
        if all(n.EPS in s and n.S_ATTACK in s for s in rows["setting"]):
            tasks.append(str(task))
    return tasks


def group_mean(rows: pd.DataFrame, keys: list[str]) -> pd.Series:
    """The mean ``value`` per ``keys``; NaN where a group holds a NaN (pandas would skip it,
    and a NaN measured in one run would vanish into the others' mean)."""
    grouped = rows.groupby(keys, sort=False)["value"]
    return grouped.mean().mask(rows["value"].isna().groupby(
        [rows[k] for k in keys], sort=False).any())
