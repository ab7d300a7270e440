"""Per-task detail tables: OOD detection per dataset x measure x metric (BHN Table 2/3 layout).

``ood_frame`` is the tidy table behind them (``ood.csv``: mean, std over runs, the published
value and our delta); ``ood_markdown`` lays it out as the BHN paper does, in percent:

* Table 2 layout, one table per uncertainty measure: rows = OOD sets, column groups = models,
  each with AUROC, AUPR-in (PR(+)) and AUPR-out (PR(−)), and ``paper`` / ``Δ`` beside ours
  where BHN Table 2 has the number.
* Table 3 layout, one table per metric, for held-out classes: rows = the class left out,
  column groups = measure (max prob = BHN's variation ratio, mean std, BALD) x model.
"""

from __future__ import annotations

import math

import pandas as pd

from robustbnn.report import names as n
from robustbnn.report.markdown import md_table
from robustbnn.report.published import published, source

__all__ = ["ood_frame", "ood_markdown"]

METRICS = {n.AUROC: "AUROC", n.AUPR_IN: "AUPR-in", n.AUPR_OUT: "AUPR-out"}
TABLE3_MEASURES = {"max_prob": "VR", "mean_std": "MS", "bald": "BALD"}


def ood_frame(results: pd.DataFrame) -> pd.DataFrame:
    """Every OOD number averaged over runs, with the published value (percent) and delta.

    Columns: ``model, dataset, measure, metric, mean, std, runs, paper, delta``; ``delta`` =
    100 x mean − paper, in points; ``std`` is the sample std over runs (NaN for one run).
    """
    if "run" not in results:
        results = results.assign(run=0)
    ood = results[results["task"] == n.OOD]
    keys = ["model", "dataset", "measure", "metric"]
    per_run = ood.groupby([*keys, "run"], sort=False)["value"].mean()
    grouped = per_run.groupby(level=keys, sort=False)
    frame = pd.DataFrame({"mean": grouped.mean(), "std": grouped.std(ddof=1),
                          "runs": grouped.size()}).reset_index()
    frame["paper"] = [published(*k) for k in frame[keys].itertuples(index=False)]
    frame["paper"] = frame["paper"].astype("float64")
    frame["delta"] = 100 * frame["mean"] - frame["paper"]
    return frame


def _cell(row: pd.Series | None) -> str:
    if row is None:
        return "–"
    text = f"{100 * row['mean']:.2f}"
    if not math.isnan(row["std"]):
        text += f" ± {100 * row['std']:.2f}"
    return text


def _paper(row: pd.Series | None) -> tuple[str, str]:
    if row is None or math.isnan(row["paper"]):
        return "–", "–"
    return f"{row['paper']:.2f}", f"{row['delta']:+.2f}"


def _with_paper(row: pd.Series | None, show: bool) -> list[str]:
    """Our cell, then ``paper`` and ``Δ`` when the column group shows the published value."""
    return [_cell(row), *(_paper(row) if show else ())]


def _lookup(frame: pd.DataFrame) -> dict[tuple[str, str, str, str], pd.Series]:
    return {(r["model"], r["dataset"], r["measure"], r["metric"]): r for _, r in frame.iterrows()}


def _table2(frame: pd.DataFrame, cells: dict, models: list[str], measure: str) -> str:
    sets = [d for d in dict.fromkeys(frame["dataset"]) if not d.startswith("heldout:")]
    has_paper = {(m, k) for (m, _, meas, k), r in cells.items()
                 if meas == measure and not math.isnan(r["paper"])}
    header = ["dataset"]
    for model in models:
        for metric, title in METRICS.items():
            header.append(f"{model} {title}")
            if (model, metric) in has_paper:
                header += ["paper", "Δ"]
    rows = []
    for dataset in sets:
        row = [dataset]
        for model in models:
            for metric in METRICS:
                row += _with_paper(cells.get((model, dataset, measure, metric)),
                                   (model, metric) in has_paper)
        rows.append(row)
    return md_table(header, rows)


def _table3(frame: pd.DataFrame, cells: dict, models: list[str], metric: str) -> str:
    held = sorted((d for d in dict.fromkeys(frame["dataset"]) if d.startswith("heldout:")),
                  key=lambda d: int(d.split(":")[1]))
    groups = [(meas, model) for meas in TABLE3_MEASURES for model in models
              if any((model, d, meas, metric) in cells for d in held)]
    has_paper = {(model, meas) for (model, d, meas, k), r in cells.items()
                 if k == metric and d in held and not math.isnan(r["paper"])}
    header = ["class"]
    for meas, model in groups:
        header.append(f"{TABLE3_MEASURES[meas]} {model}")
        if (model, meas) in has_paper:
            header += ["paper", "Δ"]
    rows = []
    for dataset in held:
        row = [dataset.split(":")[1]]
        for meas, model in groups:
            row += _with_paper(cells.get((model, dataset, meas, metric)),
                               (model, meas) in has_paper)
        rows.append(row)
    return md_table(header, rows)


def ood_markdown(frame: pd.DataFrame) -> str:
    """The OOD detail tables as GitHub Markdown (percent, mean ± std over runs)."""
    models = list(dict.fromkeys(frame["model"]))
    cells = _lookup(frame)
    out = ["# OOD detection per dataset, measure and metric\n",
           "Percent (x100), OOD = positive class; mean ± sample std over runs when several. "
           "`paper` is the published value and Δ = ours − paper in points, where BHN reports "
           f"the same model, set, measure and metric ({source()}).\n"]
    if (~frame["dataset"].str.startswith("heldout:")).any():
        out.append("## OOD sets (BHN Table 2 layout), one table per uncertainty measure\n")
        for measure in dict.fromkeys(frame["measure"]):
            out.append(f"### {measure}\n")
            out.append(_table2(frame, cells, models, measure))
    if frame["dataset"].str.startswith("heldout:").any():
        out.append("## Held-out classes (BHN Table 3 layout): VR = max prob, MS = mean std\n")
        for metric, title in METRICS.items():
            out.append(f"### {title}\n")
            out.append(_table3(frame, cells, models, metric))
    return "\n".join(out)
