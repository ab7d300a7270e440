"""Which uncertainty measures compete for a "best measure" column: every measure the run
scored on the OOD sets (the logit measures and plug-in measures with the others), chosen out
of sample where the rows keep their examples, and the legend names them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from robustbnn.report.column import OUT_OF_SAMPLE
from robustbnn.report.columns import compute_columns
from robustbnn.report.headline import measure_legend
from robustbnn.report.leaderboard import leaderboard
from robustbnn.report.legend import legend_items
from robustbnn.results.schema import Result, setting
from robustbnn.results.store import results_frame

from ._runs import rows

# Mean OOD AUROC per measure: energy best, a plug-in logit measure next, then the others.
AUROC = {"bald": 0.70, "max_prob": 0.72, "predictive_entropy": 0.75, "energy": 0.95,
         "max_logit": 0.78, "tp_logit_gap": 0.82}


def _frame() -> pd.DataFrame:
    """Model ``m``: AUROC per measure as :data:`AUROC` on two OOD sets, one run."""
    out = [r for r in rows("m") if r.task != "ood"]
    knobs = setting(S_eval=4, n_in=10, n_out=10)
    out += [Result("m", 0, "ood", dataset, knobs, measure, "auroc", v)
            for dataset in ("uniform", "gaussian") for measure, v in AUROC.items()]
    return results_frame(out).assign(run=0)


def _examples(frame: pd.DataFrame) -> pd.DataFrame:
    """Each OOD row with 400 examples whose AUROC grows with the row's value: in-distribution
    scores N(0, 1), OOD scores N(6 (value - 1/2), 1)."""
    rng = np.random.default_rng(0)
    parts = []
    for task, value in zip(frame["task"], frame["value"], strict=True):
        if task != "ood":
            parts.append(None)
            continue
        score = np.r_[rng.normal(size=200), rng.normal(6 * (value - 0.5), 1, size=200)]
        parts.append({"score": score, "label": np.r_[np.zeros(200), np.ones(200)]})
    return frame.assign(examples=pd.Series(parts, index=frame.index, dtype=object))


def _ood_columns(frame: pd.DataFrame) -> tuple[dict, dict]:
    cols, values = compute_columns(frame)
    return {c.key: c for c in cols}, values


def test_the_best_measure_is_drawn_from_every_measure_logit_ones_included() -> None:
    _, values = _ood_columns(_frame())
    assert values["ood_auroc_mean_measure"]["m"] == "energy"
    assert values["ood_auroc_mean"].loc[("m", 0)] == pytest.approx(0.95)


def test_the_best_measure_chosen_out_of_sample_is_drawn_from_every_measure() -> None:
    cols, values = _ood_columns(_examples(_frame()))
    assert values["ood_auroc_mean_measure"]["m"] == "energy"
    assert cols["ood_auroc_mean"].chosen == OUT_OF_SAMPLE


def test_the_legend_names_the_measures_that_compete() -> None:
    runs = [{"config": {"ood_preprocessing": "unit"}, "device": "cpu"}]
    ood = [item for where, item in legend_items(_frame(), runs) if where == "ood"]
    assert len(ood) == 1
    assert ("(named); every measure the run scored on those sets competes: `bald`, `energy`, "
            "`max_logit`, `max_prob`, `predictive_entropy`, `tp_logit_gap`.") in ood[0]


def test_the_headline_legend_says_logit_and_plug_in_measures_compete() -> None:
    text = measure_legend(leaderboard(_examples(_frame())))
    assert ("The candidates are every measure the run scored for the column, the logit "
            "measures (`energy`, `max_logit` and their per-sample means) and plug-in measures "
            "included") in text
