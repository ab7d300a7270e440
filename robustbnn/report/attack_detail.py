"""Attack detail tables (``attack.md``): every FGSM step size and every targeted checkpoint.

The leaderboard keeps two step sizes and the last targeted step; these tables show the whole
curves behind ``figures/attack_<model>.png`` and ``figures/targeted_<model>.png`` as numbers:

* FGSM accuracy, rows = model, columns = eps x S_attack (BHN Fig. 5 / Fig. 7);
* targeted success, rows = model, columns = step (Li & Gal Fig. 7).

Fractions; mean ± sample std over runs when several.
"""

from __future__ import annotations

import math

import pandas as pd

from robustbnn.report.markdown import md_table
from robustbnn.report.schema import with_knobs

__all__ = ["attack_markdown"]


def _cell(values: pd.Series) -> str:
    if values.empty:
        return "–"
    text = f"{values.mean():.4f}"
    std = values.std(ddof=1) if len(values) > 1 else float("nan")
    return text if math.isnan(std) else f"{text} ± {std:.4f}"


def _table(rows: pd.DataFrame, keys: list[str], title: str) -> str:
    """Rows = model; one column per value combination of ``keys`` (per-run means first)."""
    per_run = rows.groupby(["model", *keys, "run"], sort=False)["value"].mean().reset_index()
    combos = sorted({tuple(r) for r in per_run[keys].itertuples(index=False)})
    header = ["model", *(" ".join(f"{k}={v:g}" for k, v in zip(keys, c, strict=True))
                         for c in combos)]
    rows = []
    for model in dict.fromkeys(per_run["model"]):
        mine = per_run[per_run["model"] == model]
        rows.append([model, *(_cell(mine[(mine[keys] == list(c)).all(axis=1)]["value"])
                              for c in combos)])
    return f"## {title}\n\n" + md_table(header, rows)


def attack_markdown(results: pd.DataFrame) -> str | None:
    """The attack detail tables as GitHub Markdown, or None when the runs attacked nothing."""
    if "run" not in results:
        results = results.assign(run=0)
    out = ["# Attacks: every step size and checkpoint\n",
           "Fractions; mean ± sample std over runs when several. The protocol is in the "
           "leaderboard legend.\n"]
    fgsm = results[(results["task"] == "fgsm") & (results["metric"] == "accuracy")]
    if len(fgsm):
        out.append(_table(with_knobs(fgsm, "S_attack", "eps"), ["S_attack", "eps"],
                          "FGSM accuracy"))
    targeted = results[(results["task"] == "targeted")
                       & (results["metric"] == "target_success")]
    if len(targeted):
        out.append(_table(with_knobs(targeted, "step"), ["step"],
                          "Targeted attack: success rate (lower is better)"))
    return "\n".join(out) if len(out) > 2 else None
