"""Which rows a run wrote: the record the bench keeps in ``run.json`` and the check the
results reader makes of every row of ``results.jsonl`` against it.

A run's rows come from its cells, so what they may hold is known when they are written:
``run.json["results"]`` lists, per task, the datasets, settings, measures and metrics of the
rows the run wrote (:func:`catalogue`). The reader (:func:`robustbnn.results.store.read_results`)
refuses, naming the file and the line, a row that is not the run's (:class:`RunRows`): a
model ``run.json`` does not list, another seed, a metric robustbnn does not know
(:data:`robustbnn.results.names.METRICS`), or a task, dataset, setting, measure or metric the
run has no cell of. A hand-edited row (``{"S_eval": 99}`` beside the run's ``S_eval=20``, a
``ghost_model``) is refused instead of averaged into the run's numbers.

The record lists each field by task, not every combination, so it stays small (a few hundred
settings for the paper suite); a run of an older robustbnn has no record, and its rows are
checked for the model, the seed and the metric alone. Plug-ins need nothing: their measures,
attacks (tasks) and OOD sets (datasets) are in the record because the run wrote them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from robustbnn.results.names import METRICS
from robustbnn.results.schema import Result, setting_label

__all__ = ["RECORD", "RunRows", "catalogue"]

RECORD = "results"  # the run.json field
_FIELDS = ("datasets", "settings", "measures", "metrics")
_SHOWN = 3  # values a message lists before "and N more"


def _canonical(knobs: Mapping[str, Any]) -> str:
    """A setting as one string, its knob order aside (knob types kept: 1, 1.0 and true differ)."""
    return json.dumps(dict(knobs), sort_keys=True)


def catalogue(rows: Iterable[Result]) -> dict[str, dict[str, list]]:
    """What ``rows`` hold, per task: ``{task: {"datasets", "settings", "measures",
    "metrics"}}``, each a list in first-seen order (settings as objects)."""
    out: dict[str, dict[str, list]] = {}
    seen: dict[tuple[str, str], set[str]] = {}
    for row in rows:
        entry = out.setdefault(row.task, {field: [] for field in _FIELDS})
        for field, value, key in (("datasets", row.dataset, row.dataset),
                                  ("settings", dict(row.setting), _canonical(row.setting)),
                                  ("measures", row.measure, row.measure),
                                  ("metrics", row.metric, row.metric)):
            known = seen.setdefault((row.task, field), set())
            if key not in known:
                known.add(key)
                entry[field].append(value)
    return out


def _some(values: list[str]) -> str:
    """Up to :data:`_SHOWN` values, then how many more."""
    more = len(values) - _SHOWN
    return ", ".join(values[:_SHOWN]) + (f" and {more} more" if more > 0 else "")


class RunRows:
    """The rows a run can hold, from its ``run.json`` (fields it lacks are not checked).

    Args:
        run: The parsed ``run.json``.
    """

    def __init__(self, run: Mapping[str, Any]) -> None:
        config = run.get("config")
        models = config.get("models") if isinstance(config, Mapping) else None
        self.models = (list(models) if isinstance(models, list)
                       and all(isinstance(m, str) for m in models) else None)
        seed = run.get("seed")
        self.seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else None
        record = run.get(RECORD)
        self.tasks: dict[str, dict[str, dict[str, str]]] | None = None
        if isinstance(record, Mapping):
            self.tasks = {task: self._entry(entry) for task, entry in record.items()
                          if isinstance(entry, Mapping)}

    @staticmethod
    def _entry(entry: Mapping[str, Any]) -> dict[str, dict[str, str]]:
        """One task's record as ``{field: {key: shown}}`` (settings keyed canonically)."""
        out: dict[str, dict[str, str]] = {}
        for field in _FIELDS:
            values = entry.get(field)
            values = values if isinstance(values, list) else []
            if field == "settings":
                out[field] = {_canonical(v): setting_label(v) or "no knobs" for v in values
                              if isinstance(v, Mapping)}
            else:
                out[field] = {v: repr(v) for v in values if isinstance(v, str)}
        return out

    def problem(self, row: Result) -> str | None:
        """Why ``row`` is not one of the run's, or None.

        Example:
            >>> from robustbnn.results.schema import setting
            >>> rows = RunRows({"seed": 0, "config": {"models": ["mlp"]}})
            >>> rows.problem(Result("ghost", 0, "clean", "toy", setting(S_eval=4), "",
            ...                     "accuracy", 0.9))
            "model 'ghost' is not a model of the run (run.json lists ['mlp'])"
        """
        if row.metric not in METRICS:
            return f"unknown metric {row.metric!r}; known: {sorted(METRICS)}"
        if self.models is not None and row.model not in self.models:
            return f"model {row.model!r} is not a model of the run (run.json lists {self.models})"
        if self.seed is not None and row.seed != self.seed:
            return f"seed {row.seed} is not the run's seed {self.seed} (run.json)"
        if self.tasks is None:
            return None
        entry = self.tasks.get(row.task)
        if entry is None:
            return (f"the run has no cell of task {row.task!r} (run.json lists "
                    f"{_some([repr(t) for t in self.tasks])})")
        for field, key, what in (("datasets", row.dataset, f"on dataset {row.dataset!r}"),
                                 ("settings", _canonical(row.setting), "with this setting"),
                                 ("measures", row.measure, f"with measure {row.measure!r}"),
                                 ("metrics", row.metric, f"with metric {row.metric!r}")):
            known = entry[field]
            if key not in known:
                return (f"the run has no cell of task {row.task!r} {what} (run.json lists "
                        f"{_some(list(known.values()))})")
        return None
