"""Small helpers shared by the tests."""

from __future__ import annotations

import torch


def seeded(seed: int = 0) -> torch.Generator:
    """A fresh CPU generator seeded with ``seed``: the same draws on every call."""
    return torch.Generator().manual_seed(seed)


def task_results(rows: list[dict]) -> list:
    """The :class:`~robustbnn.results.schema.Result` of a task's row dicts, after checking that
    every row carrying examples (:mod:`robustbnn.results.examples`) has the value its examples
    give: the intervals resample exactly what the number was computed from."""
    import pytest

    from robustbnn.report.intervals import Component, point
    from robustbnn.results.examples import FIELD, take
    from robustbnn.results.schema import Result

    for row in rows:
        parts = row.get(FIELD)
        if parts:
            comp = Component(row["metric"], parts)
            assert comp.supported(), (row["metric"], sorted(parts))
            # float32 sums in the task, float64 here: equal to float32 rounding
            assert point(comp) == pytest.approx(row["value"], rel=1e-5, abs=1e-6), row["metric"]
    return [Result.from_json(r) for r in take(rows)[0]]
