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

from robustbnn.report.escape import escape
from robustbnn.report.markdown import MISSING, NAN, md_table, with_run
from robustbnn.report.protocol import run_fields
from robustbnn.report.published import differences, find
from robustbnn.report.ranking import cell_interval
from robustbnn.results import names as n

__all__ = ["FAULT", "ood_frame", "ood_markdown"]

# A cell of a set whose OOD cell met NaN or inf logits (robustbnn.report.faults): no number.
FAULT = "fault"
METRICS = {n.AUROC: "AUROC", n.AUPR_IN: "AUPR-in", n.AUPR_OUT: "AUPR-out"}
TABLE3_MEASURES = {"max_prob": "VR", "mean_std": "MS", "bald": "BALD"}


def _fields(runs: list[dict] | None, run: int, model: str, knobs: dict) -> dict:
    """A run's protocol fields for one model's row (empty when run.json lacks the configs)."""
    if not runs or run >= len(runs):
        return {}
    info = runs[run]
    model_cfg = info.get("models", {}).get(model, {}).get("config", {})
    return run_fields(info.get("config", {}), model_cfg, knobs)


def _published(group: pd.DataFrame, runs: list[dict] | None) -> tuple[float, str, str]:
    """(published value, its table, what differs) for the rows of one OOD result.

    What differs is empty when every run follows the published protocol; the value is NaN
    when no paper reports this model, set, measure and metric.
    """
    first = group.iloc[0]
    entries = find(first["model"], task=n.OOD, dataset=first["dataset"],
                   measure=first["measure"], metric=first["metric"])
    if not entries:
        return math.nan, "", ""
    best: tuple[int, object, dict[str, None]] | None = None
    for entry in entries:  # BHN 4 and BHN 8 share our model name: their protocols differ
        diffs: dict[str, None] = {}
        for _, row in group.iterrows():
            fields = _fields(runs, int(row["run"]), row["model"], row["setting"])
            diffs |= dict.fromkeys(differences(entry.protocol, fields))
        if best is None or len(diffs) < best[0]:
            best = (len(diffs), entry, diffs)
    _, entry, diffs = best
    return entry.value, entry.table, "; ".join(diffs)


def ood_frame(results: pd.DataFrame, runs: list[dict] | None = None) -> pd.DataFrame:
    """Every OOD number averaged over runs, with the published value (percent) and delta.

    Columns: ``model, dataset, measure, metric, mean, std, lo, hi, runs, paper, table,
    differs, delta, inside``. ``lo`` and ``hi`` bound the 95% interval of ``mean``
    (:func:`robustbnn.report.ranking.cell_interval`: over test examples and runs for the
    AUROC, whose per-example scores the runs keep; the t interval of the runs otherwise);
    ``inside`` says whether the published value lies in it (empty where no delta is shown).
    ``paper`` is the published value where a paper reports this model, set, measure
    and metric; ``delta`` = 100 x mean − paper, in points, only when the runs followed the
    published protocol (``differs`` empty, :func:`robustbnn.report.published.differences`);
    otherwise ``differs`` names each field that departs from it and ``delta`` is NaN.
    ``std`` is the sample std over runs (NaN for one run).

    Args:
        results: The tidy results (column ``run`` = the run's position in ``runs``).
        runs: Each run's ``run.json`` (bench config and model configs); without them no
            protocol can be checked, so no delta is shown.
    """
    results = with_run(results)
    ood = results[results["task"] == n.OOD]
    keys = ["model", "dataset", "measure", "metric"]
    per_run = ood.groupby([*keys, "run"], sort=False)["value"].mean()
    grouped = per_run.groupby(level=keys, sort=False)
    frame = pd.DataFrame({"mean": grouped.mean(), "std": grouped.std(ddof=1),
                          "runs": grouped.size()}).reset_index()
    bounds = [cell_interval(g) for _, g in ood.groupby(keys, sort=False)]
    frame.insert(frame.columns.get_loc("std") + 1, "lo", [b[0] for b in bounds])
    frame.insert(frame.columns.get_loc("lo") + 1, "hi", [b[1] for b in bounds])
    papers = [_published(g, runs if runs is not None else [])
              for _, g in ood.groupby(keys, sort=False)]
    frame["paper"] = pd.Series([p[0] for p in papers], dtype="float64")
    frame["table"] = [p[1] for p in papers]
    frame["differs"] = [p[2] for p in papers]
    same = frame["differs"] == ""
    frame["delta"] = (100 * frame["mean"] - frame["paper"]).where(same)
    inside = (100 * frame["lo"] <= frame["paper"]) & (frame["paper"] <= 100 * frame["hi"])
    frame["inside"] = [("yes" if i else "no") if pd.notna(d) and pd.notna(lo) else ""
                       for i, d, lo in zip(inside, frame["delta"], frame["lo"], strict=True)]
    return frame


def _cell(row: pd.Series | None) -> str:
    if row is None:
        return MISSING
    if math.isnan(row["mean"]):
        return NAN
    text = f"{100 * row['mean']:.2f}"
    lo, hi = row.get("lo", math.nan), row.get("hi", math.nan)
    if not (math.isnan(lo) or math.isnan(hi)) and lo != hi:
        return f"{text} [{100 * lo:.1f}, {100 * hi:.1f}]"
    if not math.isnan(row["std"]):
        text += f" ± {100 * row['std']:.2f}"
    return text


def _paper(row: pd.Series | None) -> tuple[str, str]:
    if row is None or math.isnan(row["paper"]):
        return "–", "–"
    if row["differs"]:  # another protocol: a reference, never a delta
        return f"({row['paper']:.2f})", "–"
    inside = {"yes": " (in our 95% interval)", "no": " (outside it)"}.get(
        str(row.get("inside", "")), "")
    return f"{row['paper']:.2f}", f"{row['delta']:+.2f}{inside}"


def _with_paper(row: pd.Series | None, show: bool) -> list[str]:
    """Our cell, then ``paper`` and ``Δ`` when the column group shows the published value."""
    return [_cell(row), *(_paper(row) if show else ())]


def _lookup(frame: pd.DataFrame) -> dict[tuple[str, str, str, str], pd.Series]:
    return {(r["model"], r["dataset"], r["measure"], r["metric"]): r for _, r in frame.iterrows()}


def _table2(frame: pd.DataFrame, cells: dict, models: list[str], measure: str,
            faults: set[tuple[str, str]]) -> str:
    sets = [d for d in dict.fromkeys([*frame["dataset"], *sorted(d for _, d in faults)])
            if not d.startswith("heldout:")]
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
                cell = _with_paper(cells.get((model, dataset, measure, metric)),
                                   (model, metric) in has_paper)
                row += [FAULT, *cell[1:]] if (model, dataset) in faults else cell
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


def ood_markdown(frame: pd.DataFrame, faults: set[tuple[str, str]] | None = None) -> str:
    """The OOD detail tables as GitHub Markdown (percent, mean ± std over runs).

    Args:
        frame: :func:`ood_frame`.
        faults: The (model, set) pairs whose OOD cell met NaN or inf logits in some run
            (:func:`robustbnn.report.faults.ood_faults`): their cells read :data:`FAULT`.
    """
    faults = faults or set()
    models = list(dict.fromkeys([*frame["model"], *sorted(m for m, _ in faults)]))
    cells = _lookup(frame)
    out = ["# OOD detection per dataset, measure and metric\n",
           "Percent (x100), OOD = positive class; mean ± sample std over runs when several. "
           "`paper` is the published value where BHN reports the same model, set, measure and "
           "metric, and Δ = ours − paper in points, shown only where this run followed the "
           "paper's protocol. A published value in parentheses was measured under another "
           "protocol: it is a reference, listed below with what differs.\n"]
    if (~frame["dataset"].str.startswith("heldout:")).any():
        out.append("## OOD sets (BHN Table 2 layout), one table per uncertainty measure\n")
        for measure in dict.fromkeys(frame["measure"]):
            out.append(f"### {escape(measure)}\n")
            out.append(_table2(frame, cells, models, measure, faults))
    if frame["dataset"].str.startswith("heldout:").any():
        out.append("## Held-out classes (BHN Table 3 layout): VR = max prob, MS = mean std\n")
        for metric, title in METRICS.items():
            out.append(f"### {title}\n")
            out.append(_table3(frame, cells, models, metric))
    out += _published_under(frame)
    if faults:
        named = "; ".join(f"{escape(m)} on {escape(d)}" for m, d in sorted(faults))
        out.append(f"**{FAULT}** = the model returned NaN or inf logits on the set (a numerical "
                   f"fault), so it has no number there, and its mean over the sets in the "
                   f"leaderboard reads `partial`: {named}.\n")
    return "\n".join(out)


def _published_under(frame: pd.DataFrame) -> list[str]:
    """The protocol differences behind every parenthesised published value, once per table."""
    refs = frame[(frame["paper"].notna()) & (frame["differs"] != "")]
    if refs.empty:
        return []
    out = ["## Published under another protocol\n"]
    for (table, model), group in refs.groupby(["table", "model"], sort=False):
        diffs = dict.fromkeys(d for text in group["differs"] for d in text.split("; "))
        out.append(f"- {escape(model)}, {escape(table, to='code')}: "
                   + escape("; ".join(diffs)))
    return [*out, ""]
