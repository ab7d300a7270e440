"""The PGD-EOT budget legend item says which objective the budget cells ascended."""

from __future__ import annotations

from robustbnn.report.legend import legend
from robustbnn.results.schema import Result, setting
from robustbnn.results.store import results_frame


def _budget_item(**knobs: object) -> str:
    rows = [Result("m", 0, task, "toy", setting(eps=0.1, S_attack=4, steps=10, n=50, k=3,
                                                **knobs), "", metric, 0.5)
            for task, metric in (("pgd_budget", "accuracy"), ("worst_of_k", "all_k_accuracy"))]
    (item,) = [i for i in legend(results_frame(rows), []) if i.startswith("**PGD-EOT budget")]
    return item


def test_the_budget_legend_names_the_worst_case_over_ce_and_dlr() -> None:
    item = _budget_item(objective="ce+dlr")
    assert ("per example the worst case of PGD-EOT on mean_s CE and on mean_s DLR (Croce & Hein "
            "2020), true labels" in item)
    assert "L∞ PGD-EOT (mean_s CE, true labels" in _budget_item(objective="ce")
    assert "L∞ PGD-EOT (mean_s CE, true labels" in _budget_item()  # results before the knob
