"""The robustness leaderboard's columns: all-k robust accuracy, detection-aware accuracy,
worst-case OOD AUROC, and the attack-reliability flags (:func:`robustness_columns`)."""

from __future__ import annotations

import pandas as pd

from robustbnn.report.column import ROBUSTNESS, Column, best_measure, per_run
from robustbnn.report.column_samples import carried
from robustbnn.results import names as n
from robustbnn.results.schema import with_knobs

__all__ = ["CONVERGED", "UPPER_BOUND", "robustness_columns"]

# The two values of a robust accuracy's ``_bound`` column.
UPPER_BOUND = "upper bound (eot_not_converged)"
CONVERGED = "converged"


def _flags(results: pd.DataFrame) -> pd.Series:
    """Per model, the raised attack-reliability flags (with their eps, and the runs that raised
    them when not all did), or ``none``."""
    rows = with_knobs(results[(results["task"] == n.ROBUST_FLAGS)
                              & (results["metric"] == n.RAISED)], n.EPS)
    runs = rows.groupby("model", sort=False)["run"].nunique()
    out: dict[str, str] = {}
    for model, group in rows.groupby("model", sort=False):
        raised = group[group["value"] >= 1].groupby(["measure", n.EPS], sort=True)["run"]
        items = []
        for (flag, eps), by in raised.nunique().items():
            share = "" if by == runs[model] else f" in {by}/{runs[model]} runs"
            items.append(f"{flag} (ε={eps:g}{share})")
        out[str(model)] = ", ".join(items) or "none"
    return pd.Series(out, dtype=object)


def _bound(results: pd.DataFrame, eps: float, models: object) -> pd.Series:
    """Per model, ``upper bound`` when ``eot_not_converged`` was raised at ``eps`` in some
    run (more posterior samples still lowered accuracy), else ``converged``."""
    flags = with_knobs(results[(results["task"] == n.ROBUST_FLAGS)
                               & (results["measure"] == "eot_not_converged")
                               & (results["metric"] == n.RAISED)], n.EPS)
    raised = set(flags[(flags[n.EPS] == eps) & (flags["value"] >= 1)]["model"])
    return pd.Series({str(m): UPPER_BOUND if m in raised else CONVERGED for m in models},
                     dtype=object)


def robustness_columns(results: pd.DataFrame) -> list[tuple[Column, pd.Series]]:
    """The robustness leaderboard's columns: all-k robust accuracy of the largest PGD-EOT
    budget, detection-aware robust accuracy (adaptive, then non-adaptive) of the best
    detector, worst-case OOD AUROC of the best measure, and the reliability flags."""
    out: list[tuple[Column, pd.Series]] = []
    task, metric = results["task"], results["metric"]
    allk = with_knobs(results[(task == n.WORST_OF_K) & (metric == n.ALL_K_ACCURACY)],
                      n.EPS, n.K, n.S_ATTACK, n.STEPS)
    for eps in sorted(allk[n.EPS].dropna().unique()):
        at = allk[allk[n.EPS] == eps]
        k, s, steps = (int(at[key].max()) for key in (n.K, n.S_ATTACK, n.STEPS))
        # adaptive EOT: each model's largest budget has the samples its check needed
        low = int(at[n.S_ATTACK].min())
        samples = f"{low}–{s}" if low < s else f"{s}"
        key = f"robust_accuracy_allk_eps{eps:g}"
        col = Column(key, f"PGD-EOT all-{k} acc ε={eps:g} (S={samples}×{steps})",
                     n.ALL_K_ACCURACY,
                     aspect=ROBUSTNESS, bound_key=f"{key}_bound")
        out.append((col, per_run(at)))
        out.append((Column(f"{key}_bound", f"ε={eps:g} acc is", kind="text", aspect=ROBUSTNESS),
                    _bound(results, eps, at["model"].unique())))
    det = with_knobs(results[(task == n.DETECTOR_AWARE) & (metric == n.DETECTION_AWARE_ACCURACY)],
                     n.EPS, n.ADAPTIVE, n.FPR)
    if len(det):
        eps, fpr = det[n.EPS].min(), det[n.FPR].max()
        at = det[(det[n.EPS] == eps) & (det[n.FPR] == fpr)]
        adaptive = at[at[n.ADAPTIVE] == True]  # noqa: E712 - object column of bools
        value, best = best_measure(adaptive, n.DETECTION_AWARE_ACCURACY)
        key = f"detection_aware_eps{eps:g}"
        out.append((Column(key, f"det.-aware acc ε={eps:g} adaptive ({fpr:.0%} FPR)",
                           n.DETECTION_AWARE_ACCURACY, aspect=ROBUSTNESS,
                           measure_key=f"{key}_measure"), value))
        plain = at[(at[n.ADAPTIVE] == False)  # noqa: E712
                   & (at["measure"] == at["model"].map(best))]
        out.append((Column(f"{key}_nonadaptive", f"det.-aware acc ε={eps:g} non-adaptive",
                           n.DETECTION_AWARE_ACCURACY, aspect=ROBUSTNESS),
                    per_run(plain, half=carried(value).half)))
        out.append((Column(f"{key}_measure", "detector", kind="text", aspect=ROBUSTNESS), best))
    adv = with_knobs(results[(task == n.ADV_OOD) & (metric == n.AUROC)], n.EPS)
    if len(adv):
        eps = adv[n.EPS].max()
        value, best = best_measure(adv[adv[n.EPS] == eps], n.AUROC)  # mean over the sets
        out.append((Column(f"adv_ood_auroc_eps{eps:g}", f"worst-case OOD AUROC ε={eps:g}",
                           n.AUROC, aspect=ROBUSTNESS,
                           measure_key=f"adv_ood_auroc_eps{eps:g}_measure"), value))
        clean = adv[(adv[n.EPS] == 0) & (adv["measure"] == adv["model"].map(best))]
        out.append((Column("adv_ood_auroc_clean", "same OOD images clean AUROC", n.AUROC,
                           aspect=ROBUSTNESS), per_run(clean, half=carried(value).half)))
        out.append((Column(f"adv_ood_auroc_eps{eps:g}_measure", "worst-case OOD measure",
                           kind="text", aspect=ROBUSTNESS), best))
    if (task == n.ROBUST_FLAGS).any():
        out.append((Column("robust_flags", "robustness flags", kind="text", aspect=ROBUSTNESS),
                    _flags(results)))
    return out
