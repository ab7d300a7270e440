"""The protocol legend of a leaderboard, derived from the results and ``run.json`` alone.

Every row's ``setting`` holds its protocol knobs (S_attack, S_eval, objective, label policy,
clipping); the OOD preprocessing comes from the runs' stored configs. Every string from the
results or ``run.json`` goes through :func:`robustbnn.report.escape.escape`: as Markdown text,
or as a whole code span where the legend shows it as code. Each item belongs to the aspect
of the columns it explains (:func:`legend_items`), so an aspect table carries its own items.
"""

from __future__ import annotations

import pandas as pd

from robustbnn.report.column import ATTACKS, OOD, ROBUSTNESS, SANITY, SHIFT
from robustbnn.report.column_samples import has_examples
from robustbnn.report.columns import DETECTION_EPS, FGSM_EPS, ood_auroc_rows, task_title
from robustbnn.report.escape import escape
from robustbnn.results import names as n
from robustbnn.results.schema import attack_tasks, setting_label

__all__ = ["EVERY_ASPECT", "aspect_legend", "legend", "legend_items"]

# The aspect of a legend item that every table needs (the data and the samples).
EVERY_ASPECT = ""



def _chosen(rows: pd.DataFrame, metric: str) -> str:
    """How a best measure was chosen from the ``metric`` rows of ``rows``: out of sample where
    they have examples (:func:`robustbnn.report.column.best_measure`), in sample otherwise."""
    if has_examples(rows[rows["metric"] == metric]):
        return (" on a selection half of the examples, scored on the other half (chosen out "
                "of sample; the number and its interval are the scoring half's)")
    return " (chosen in sample: these runs keep no per-example values)"

def _values(rows: pd.DataFrame, key: str) -> list[str]:
    """The distinct values of knob ``key`` in ``rows`` as text (not yet escaped), numbers in
    numeric order."""
    found = {v for s in rows["setting"] if (v := s.get(key)) is not None}
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in found)
    ordered = sorted(found) if numbers else sorted(found, key=str)
    return [setting_label({key: v}).split("=", 1)[1] for v in ordered]


def _raw(values: list[str]) -> str:
    if not values:
        return "?"
    return values[0] if len(values) == 1 else "{" + ", ".join(values) + "}"


def _one(values: list[str]) -> str:
    """One value, or the set of them, as Markdown text."""
    return escape(_raw(values))


def _code(values: list[str]) -> str:
    """One value, or the set of them, as a Markdown code span."""
    return escape(_raw(values), to="code")


def _all(values: list[str]) -> str:
    """Every value, comma-separated, as Markdown text."""
    return ", ".join(escape(v) for v in values)


def _codes(names: list[str]) -> str:
    """Names from the data (measure names) as comma-separated Markdown code spans."""
    return ", ".join(escape(name, to="code") for name in names)


def _names(names: list[str]) -> str:
    """Names from the data (dataset names) as a bracketed list of quoted Markdown text."""
    return "[" + ", ".join(f"'{escape(name)}'" for name in names) + "]"


# Knobs every attack row has, or that the legend words itself; any other is a setting.
_ATTACK_KNOBS = (n.EPS, n.S_ATTACK, n.S_EVAL, n.N, "norm", n.STEPS, n.STEP_SIZE, n.RESTARTS,
                 n.OBJECTIVE, n.LABEL)


def _attack_item(rows: pd.DataFrame, task: str) -> str:
    """The legend item of an attack task (PGD-EOT or a plug-in attack): its norm and only the
    settings its rows carry."""
    norms = [v for v in _values(rows, "norm") if v in n.NORMS] or [n.LINF]
    norm = "/".join(n.NORMS[v] for v in norms)
    what = (f"{norm} projected gradient descent with expectation over transformation "
            "(PGD-EOT, Madry et al. 2018; Athalye et al. 2018)" if task == n.PGD
            else f"Plug-in attack {escape(task, to='code')}")
    parts = [f"{norm} radius ε ∈ {{{_all(_values(rows, n.EPS))}}}"]
    if _values(rows, n.STEPS):
        size = (f" of size {_one(_values(rows, n.STEP_SIZE))}"
                if _values(rows, n.STEP_SIZE) else "")
        parts.append(f"{_one(_values(rows, n.STEPS))} steps{size}")
    if _values(rows, n.RESTARTS):
        parts.append(f"{_one(_values(rows, n.RESTARTS))} restart(s)")
    parts.append(f"input gradients from S_attack ∈ {{{_all(_values(rows, n.S_ATTACK))}}} "
                 "posterior samples")
    if _values(rows, n.OBJECTIVE):
        parts.append(f"objective {_code(_values(rows, n.OBJECTIVE))}")
    if _values(rows, n.LABEL):
        parts.append(f"label {_code(_values(rows, n.LABEL))}")
    others = dict.fromkeys(k for s in rows["setting"] for k in s if k not in _ATTACK_KNOBS)
    parts += [f"{escape(k)} = {_one(_values(rows, k))}" for k in others]
    return (f"**{escape(task_title(task))}.** {what}: {', '.join(parts)}, on "
            f"{_one(_values(rows, n.N))} test points. Leaderboard: accuracy at every ε "
            "with the largest S_attack run there; every cell in `attack.md`.")


# The budget cells' objectives (robustbnn.bench_config.BudgetObjective), as the legend words them.
_BUDGET_OBJECTIVES = {"ce": "mean_s CE", "dlr": "mean_s DLR (Croce & Hein 2020)"}


def _budget_objective(budget: pd.DataFrame) -> str:
    """The objective of the budget rows: one loss, or per example the worst case over several
    (their knob ``objective``, e.g. ``ce+dlr``); results without the knob were CE alone."""
    names = _values(budget, n.OBJECTIVE) or ["ce"]
    worded = []
    for name in names:
        parts = [_BUDGET_OBJECTIVES.get(p, escape(p, to="code")) for p in name.split("+")]
        worded.append(parts[0] if len(parts) == 1 else
                      "per example the worst case of PGD-EOT on " + " and on ".join(parts))
    return "; ".join(worded)


def _adaptive_eot(results: pd.DataFrame) -> str:
    """The legend sentence of adaptive EOT (" " first), or "" for runs without a cap."""
    flags = results[(results["task"] == n.ROBUST_FLAGS)
                    & (results["measure"] == "eot_not_converged")]
    caps = [c for c in _values(flags, "s_cap") if c != "0"]
    if not caps:
        return ""
    return (" **Adaptive EOT**: while its largest S_attack still lowered accuracy by more than "
            f"{_one(_values(flags, n.TOL))} against the next-largest, a stochastic model's "
            "attack ran again with the grid's last S_attack ratio times more posterior samples, "
            f"up to S_attack = {_all(caps)}; its largest budget is where that stopped.")


def _robustness_items(results: pd.DataFrame) -> list[str]:
    """The legend items of the robustness leaderboard's columns (docs/concepts.md, "Honest
    robustness numbers")."""
    task = results["task"]
    items = []
    budget = results[task == n.PGD_BUDGET]
    if len(budget):
        worst = results[task == n.WORST_OF_K]
        items.append(
            f"**PGD-EOT budget.** L∞ PGD-EOT ({_budget_objective(budget)}, true labels, random "
            f"start, step ε × fraction) at ε ∈ {{{_all(_values(budget, n.EPS))}}} over S_attack ∈ "
            f"{{{_all(_values(budget, n.S_ATTACK))}}} × steps ∈ "
            f"{{{_all(_values(budget, n.STEPS))}}} on {_one(_values(budget, n.N))} test "
            f"points (curves in `attack.md`).{_adaptive_eot(results)} The robust-accuracy "
            "column is **all-k accuracy**: "
            f"the largest budget's inputs evaluated k = {_one(_values(worst, n.K))} times with "
            "fresh S_eval samples each, counted correct only when right in all k.")
    det = results[task == n.DETECTOR_AWARE]
    if len(det):
        items.append(
            "**Detection-aware.** An adversarial input is defended when classified correctly "
            "or flagged by the detector (uncertainty above the threshold that flags "
            f"{_one(_values(det, n.FPR))} of clean test points). Adaptive = two-phase PGD-EOT "
            "that, once misclassified, lowers the detector's uncertainty (Carlini & Wagner "
            f"2017); same ε = {_one(_values(det, n.EPS))}, {_one(_values(det, n.STEPS))} "
            f"steps, S_attack = {_one(_values(det, n.S_ATTACK))} as the non-adaptive attack. "
            "Detector = the measure with the best adaptive number"
            f"{_chosen(det, n.DETECTION_AWARE_ACCURACY)} (named).")
    adv = results[task == n.ADV_OOD]
    if len(adv):
        items.append(
            f"**Worst-case OOD.** The first {_one(_values(adv, n.N_OUT))} images of "
            f"{_names(sorted(set(adv['dataset'])))} moved "
            "within ε to lower each uncertainty measure "
            "(PGD-EOT, Hein et al. 2019), AUROC against clean in-distribution scores; the "
            "column is the mean over sets at the largest ε for the measure with the best "
            f"worst case{_chosen(adv, n.AUROC)} (named), beside the same images' clean AUROC.")
    if (task == n.ROBUST_FLAGS).any():
        items.append(
            "**Robustness flags.** `eot_not_converged`: the largest S_attack (after adaptive "
            "EOT, its cap) still lowers accuracy by more than the tolerance against the "
            "next-largest, so the robust accuracy is an upper bound; `transfer_beats_eot`: "
            "attacking one frozen posterior sample beats EOT; `low_gradient_snr`: the "
            "S_attack-sample gradient is mostly noise; `black_box_beats_white_box`: Square "
            "beats PGD-EOT.")
    return items


def _shift_items(results: pd.DataFrame, runs: list[dict]) -> list[str]:
    """The legend items of the calibration and dataset-shift columns."""
    task = results["task"]
    items = []
    if ((task == n.CLEAN) & (results["metric"] == n.BRIER)).any():
        items.append(
            "**Calibration.** Of the predictive mean: NLL (nats), ECE (15 equal-width "
            "confidence bins) and the Brier score Σ_c (p̄_c − 1[c = y])², summed over classes "
            "(Brier 1950; in [0, 2]; Ovadia et al.'s released code reports it minus 1). "
            "Reliability diagrams with the same bins: `figures/reliability*.png`.")
    shift = results[task == n.SHIFT]
    if len(shift):
        kinds = set(_values(shift, n.SHIFT))
        seeds = sorted({escape(r.get("config", {}).get("shift_seed", "?")) for r in runs})
        parts = []
        if n.ShiftKind.ROTATED in kinds:
            rotated = shift[[s.get(n.SHIFT) == n.ShiftKind.ROTATED for s in shift["setting"]]]
            parts.append(
                f"rotated by {{{_all(_values(rotated, n.ANGLE))}}} degrees (Ovadia et al. "
                "2019, Fig. 1; bilinear, counter-clockwise; 0 = clean); the column is the area "
                "under accuracy against angle divided by the angle range, and the ECE averaged "
                "over the angles")
        if n.ShiftKind.CORRUPTED in kinds:
            corrupted = shift[[s.get(n.SHIFT) == n.ShiftKind.CORRUPTED for s in shift["setting"]]]
            names = list(dict.fromkeys(s[n.CORRUPTION] for s in corrupted["setting"]))  # counted
            parts.append(
                f"corrupted by the {len(names)} MNIST-C corruptions (Mu & Gilmer 2019, the "
                f"reference code's severities, corruption seed {', '.join(seeds)}); columns "
                "average accuracy and ECE over them")
        items.append(
            f"**Dataset shift.** The first {_one(_values(shift, n.N))} test points "
            + "; and ".join(parts) + ". Each set is scored with S_eval fresh samples: "
            "accuracy, NLL, ECE, Brier score and the mean of every uncertainty measure, per "
            "angle and corruption in `shift.md`.")
    return items


def legend(results: pd.DataFrame, runs: list[dict]) -> list[str]:
    """The protocol, one item per stage, for the Markdown/HTML/JSON leaderboards.

    Args:
        results: The combined tidy results.
        runs: The ``run.json`` payloads of the runs (their ``config`` is read).
    """
    return [item for _, item in legend_items(results, runs)]


def aspect_legend(items: list[tuple[str, str]], aspect: str) -> list[str]:
    """The items of :func:`legend_items` that an aspect table shows: its own and those of
    every aspect (:data:`EVERY_ASPECT`)."""
    return [item for where, item in items if where in (aspect, EVERY_ASPECT)]


def legend_items(results: pd.DataFrame, runs: list[dict]) -> list[tuple[str, str]]:
    """The protocol as :func:`legend` gives it, each item with its aspect
    (:data:`robustbnn.report.column.ASPECTS`, or :data:`EVERY_ASPECT`).

    Args:
        results: The combined tidy results.
        runs: The ``run.json`` payloads of the runs (their ``config`` is read).
    """
    return [(where, item) for where, found in _tagged(results, runs) for item in found]


def _tagged(results: pd.DataFrame, runs: list[dict]) -> list[tuple[str, list[str]]]:
    """The legend items in order, grouped by aspect."""
    task = results["task"]
    trained_on = results.loc[task.isin([n.CLEAN, n.FGSM]), "dataset"]
    datasets = ", ".join(sorted(set(trained_on)))
    seeds = sorted({int(s) for s in results["seed"]})
    data = [f"**Data.** Trained and tested on {escape(datasets, to='code')}; seeds {seeds}. "
            f"Every evaluation draws S_eval = {_one(_values(results, n.S_EVAL))} fresh "
            "posterior samples (never the attack's)."]
    items: list[str] = []
    fgsm = results[task == n.FGSM]
    if len(fgsm):
        items.append(
            f"**FGSM.** Input gradients from S_attack ∈ {{{_all(_values(fgsm, n.S_ATTACK))}}}"
            f" posterior samples; objective {_code(_values(fgsm, n.OBJECTIVE))} (predictive = "
            "cross-entropy of the MC predictive, expected = EOT); label "
            f"{_code(_values(fgsm, n.LABEL))}; "
            f"clip to [0, 1] = {_one(_values(fgsm, n.CLIP))}. Leaderboard ε ∈ "
            f"{{{', '.join(f'{e:g}' for e in FGSM_EPS)}}}. Adversary detection: AUROC of "
            f"clean (0) vs FGSM (1) test points at ε = {DETECTION_EPS:g} with the largest "
            "S_attack, for the uncertainty measure with the best mean AUROC"
            f"{_chosen(fgsm, n.ADVERSARY_DETECTION)} (named).")
    for name in attack_tasks(results):
        items.append(_attack_item(results[task == name], name))
    targeted = results[task == n.TARGETED]
    if len(targeted):
        items.append(
            f"**Targeted.** Iterative FGSM (Li & Gal 2017): step "
            f"{_one(_values(targeted, n.STEP_SIZE))} towards class "
            f"{_one(_values(targeted, n.TARGET))}, S_attack = "
            f"{_one(_values(targeted, n.S_ATTACK))} (1 for deterministic models), on "
            f"{_one(_values(targeted, n.N))} test digits of other classes; success = the "
            "fraction classified as the target (lower is better).")
    ood_items = []
    ood = results[task == n.OOD]
    if len(ood):
        faults = results[task == n.NUMERICAL_FAULT]
        faulted = list(dict.fromkeys(
            d for d, s in zip(faults["dataset"], faults["setting"], strict=True)
            if s.get(n.IN_TASK) == n.OOD))  # a set all of whose cells faulted has no OOD row
        sets = list(dict.fromkeys([*(d for d in ood["dataset"] if not d.startswith("heldout:")),
                                   *faulted]))
        held = list(dict.fromkeys(d for d in ood["dataset"] if d.startswith("heldout:")))
        prep = sorted({str(r.get("config", {}).get("ood_preprocessing", "?")) for r in runs})
        ood_items.append(
            f"**OOD.** Sets {_names(sets)} ({_one(_values(ood, n.N_OUT))} images each), "
            f"preprocessing {escape(', '.join(prep), to='code')}; OOD is the positive class; "
            "mean OOD AUROC = the mean over those sets for the uncertainty measure with the "
            f"best mean{_chosen(ood, n.AUROC)} (named); every measure the run scored on those "
            f"sets competes: {_codes(sorted(set(ood_auroc_rows(results)['measure'])))}."
            + (f" Held-out classes {_names(held)} are in `ood.md` only." if held else "")
            + (f" NaN or inf logits on {_names(faulted)} (the numerical faults column names "
               "the models): their mean OOD AUROC reads partial." if faulted else "")
            + " Per set, measure and metric: `ood.md`, `ood.csv`.")
    sanity = []
    if (task == n.COST).any():
        devices = sorted({str(r.get("device", "?")) for r in runs})
        sanity.append(f"**Cost.** Seconds per 1,000 test predictions at S_eval samples on "
                      f"{escape(', '.join(devices), to='code')} (machine-dependent), and the "
                      "parameter count.")
    if (task == n.FGSM_SANITY).any():
        sanity.append("**Sanity.** Carlini et al. (2019) checks per S_attack (docs/attacks.md); "
                      "the column names every failed one.")
    return [(EVERY_ASPECT, data), (ATTACKS, items), (OOD, ood_items),
            (ROBUSTNESS, _robustness_items(results)), (SHIFT, _shift_items(results, runs)),
            (SANITY, sanity)]
