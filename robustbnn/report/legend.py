"""The protocol legend of a leaderboard, derived from the results and ``run.json`` alone.

Every row's ``setting`` holds its protocol knobs (S_attack, S_eval, objective, label policy,
clipping); the OOD preprocessing comes from the runs' stored configs.
"""

from __future__ import annotations

import pandas as pd

from robustbnn.report.columns import DETECTION_EPS, FGSM_EPS
from robustbnn.report.schema import knobs

__all__ = ["legend"]


def _values(rows: pd.DataFrame, key: str) -> list[str]:
    """The distinct values of knob ``key`` in ``rows``, numbers in numeric order."""
    found = {knobs(s)[key] for s in dict.fromkeys(rows["setting"]) if key in knobs(s)}
    try:
        return sorted(found, key=float)
    except ValueError:
        return sorted(found)


def _one(values: list[str]) -> str:
    return values[0] if len(values) == 1 else "{" + ", ".join(values) + "}"


def legend(results: pd.DataFrame, runs: list[dict]) -> list[str]:
    """The protocol, one item per stage, for the Markdown/HTML/JSON leaderboards.

    Args:
        results: The combined tidy results.
        runs: The ``run.json`` payloads of the runs (their ``config`` is read).
    """
    task = results["task"]
    datasets = sorted(set(results.loc[task.isin(["clean", "fgsm"]), "dataset"]))
    seeds = sorted({int(s) for s in results["seed"]})
    items = [f"**Data.** Trained and tested on `{', '.join(datasets)}`; seeds {seeds}. "
             f"Every evaluation draws S_eval = {_one(_values(results, 'S_eval'))} fresh "
             "posterior samples (never the attack's)."]
    fgsm = results[task == "fgsm"]
    if len(fgsm):
        items.append(
            f"**FGSM.** Input gradients from S_attack ∈ {{{', '.join(_values(fgsm, 'S_attack'))}}}"
            f" posterior samples; objective `{_one(_values(fgsm, 'objective'))}` (predictive = "
            "cross-entropy of the MC predictive, expected = EOT); label "
            f"`{_one(_values(fgsm, 'label'))}`; "
            f"clip to [0, 1] = {_one(_values(fgsm, 'clip'))}. Leaderboard ε ∈ "
            f"{{{', '.join(f'{e:g}' for e in FGSM_EPS)}}}. Adversary detection: AUROC of "
            f"clean (0) vs FGSM (1) test points at ε = {DETECTION_EPS:g} with the largest "
            "S_attack, for the uncertainty measure with the best mean AUROC (named).")
    targeted = results[task == "targeted"]
    if len(targeted):
        items.append(
            f"**Targeted.** Iterative FGSM (Li & Gal 2017): step "
            f"{_one(_values(targeted, 'step_size'))} towards class "
            f"{_one(_values(targeted, 'target'))}, S_attack = "
            f"{_one(_values(targeted, 'S_attack'))} (1 for deterministic models), on "
            f"{_one(_values(targeted, 'n'))} test digits of other classes; success = the "
            "fraction classified as the target (lower is better).")
    ood = results[task == "ood"]
    if len(ood):
        sets = list(dict.fromkeys(d for d in ood["dataset"] if not d.startswith("heldout:")))
        held = list(dict.fromkeys(d for d in ood["dataset"] if d.startswith("heldout:")))
        prep = sorted({str(r.get("config", {}).get("ood_preprocessing", "?")) for r in runs})
        items.append(
            f"**OOD.** Sets {sets} ({_one(_values(ood, 'n_out'))} images each), preprocessing "
            f"`{', '.join(prep)}`; OOD is the positive class; mean OOD AUROC = the mean over "
            "those sets for the uncertainty measure with the best mean (named)."
            + (f" Held-out classes {held} are in `ood.md` only." if held else "")
            + " Per set, measure and metric: `ood.md`, `ood.csv`.")
    if (task == "cost").any():
        devices = sorted({str(r.get("device", "?")) for r in runs})
        items.append(f"**Cost.** Seconds per 1,000 test predictions at S_eval samples on "
                     f"`{', '.join(devices)}` (machine-dependent), and the parameter count.")
    if (task == "fgsm_sanity").any():
        items.append("**Sanity.** Carlini et al. (2019) checks per S_attack (README, Attacks); "
                     "the column names every failed one.")
    return items
