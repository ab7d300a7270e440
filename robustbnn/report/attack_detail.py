"""Attack detail tables (``attack.md``): every step size, sample count and checkpoint.

The leaderboard keeps a few step sizes and the last targeted step; these tables show the whole
curves behind the attack figures as numbers:

* FGSM accuracy, rows = model, columns = S_attack x eps (BHN Fig. 5 / Fig. 7);
* for every other attack task (PGD and plug-in attacks: rows with ``eps`` and ``S_attack``
  knobs): accuracy, rows = model, and adversary-detection AUROC, rows = model x measure,
  columns = S_attack x eps;
* targeted success, rows = model, columns = step (Li & Gal Fig. 7);
* the PGD-EOT budget curves: accuracy per eps, rows = model, columns = S_attack x steps (with
  the cost in gradient evaluations); worst-of-k (expected, all-k, flip probability) of the
  largest budget; detection-aware robust accuracy per detector, non-adaptive and adaptive;
  worst-case OOD AUROC per set and measure, columns = eps (0 = clean).

Fractions; mean ± sample std over runs when several.
"""

from __future__ import annotations

import pandas as pd

from robustbnn.report.columns import task_title
from robustbnn.report.escape import escape
from robustbnn.report.markdown import grid_table as _table
from robustbnn.report.markdown import with_run
from robustbnn.results import names as n
from robustbnn.results.schema import attack_tasks, with_knobs

__all__ = ["attack_markdown"]


def attack_markdown(results: pd.DataFrame) -> str | None:
    """The attack detail tables as GitHub Markdown, or None when the runs attacked nothing."""
    results = with_run(results)
    out = ["# Attacks: every step size and checkpoint\n",
           "Fractions; mean ± sample std over runs when several. The protocol is in the "
           "leaderboard legend.\n"]
    task, metric = results["task"], results["metric"]
    fgsm = results[(task == n.FGSM) & (metric == n.ACCURACY)]
    if len(fgsm):
        out.append(_table(with_knobs(fgsm, n.S_ATTACK, n.EPS), [n.S_ATTACK, n.EPS],
                          "FGSM accuracy"))
    for name in attack_tasks(results):
        title = escape(task_title(name))  # a plug-in attack's name, in a heading
        rows = with_knobs(results[task == name], n.S_ATTACK, n.EPS)
        out.append(_table(rows[rows["metric"] == n.ACCURACY], [n.S_ATTACK, n.EPS],
                          f"{title} accuracy"))
        det = rows[rows["metric"] == n.ADVERSARY_DETECTION]
        if len(det):
            out.append(_table(det, [n.S_ATTACK, n.EPS], f"{title} adversary detection AUROC "
                              "(clean 0 vs attacked 1) per uncertainty measure",
                              by=("model", "measure")))
    targeted = results[(task == n.TARGETED) & (metric == n.TARGET_SUCCESS)]
    if len(targeted):
        out.append(_table(with_knobs(targeted, n.STEP), [n.STEP],
                          "Targeted attack: success rate (lower is better)"))
    out += _robustness_tables(results)
    return "\n".join(out) if len(out) > 2 else None


def _robustness_tables(results: pd.DataFrame) -> list[str]:
    """The robustness leaderboard's detail tables (empty when the run has none)."""
    task, metric = results["task"], results["metric"]
    out = []
    budget = results[(task == n.PGD_BUDGET) & (metric == n.ACCURACY)]
    if len(budget):
        rows = with_knobs(budget, n.EPS, n.S_ATTACK, n.STEPS, n.GRADIENT_EVALUATIONS)
        for eps in sorted(rows[n.EPS].unique()):
            out.append(_table(rows[rows[n.EPS] == eps], [n.S_ATTACK, n.STEPS],
                              f"PGD-EOT budget, ε = {eps:g}: accuracy per S_attack × steps "
                              "(cost = their product)"))
    worst = results[task == n.WORST_OF_K]
    if len(worst):
        rows = with_knobs(worst, n.EPS)
        out.append(_table(rows, [n.EPS], "Worst-of-k at the largest budget (expected accuracy, "
                          "all-k accuracy, flip probability)", by=("model", "metric")))
    det = results[(task == n.DETECTOR_AWARE) & (metric == n.DETECTION_AWARE_ACCURACY)]
    if len(det):
        rows = with_knobs(det, n.EPS, n.ADAPTIVE)
        rows = rows.assign(**{n.ADAPTIVE: rows[n.ADAPTIVE].astype(float)})
        out.append(_table(rows, [n.EPS, n.ADAPTIVE], "Detection-aware robust accuracy "
                          "(correct or flagged; adaptive=1 knows the detector)",
                          by=("model", "measure")))
    adv = results[(task == n.ADV_OOD) & (metric == n.AUROC)]
    if len(adv):
        out.append(_table(with_knobs(adv, n.EPS), [n.EPS], "Worst-case OOD AUROC (eps = 0: "
                          "the same images clean)", by=("model", "dataset", "measure")))
    return out
