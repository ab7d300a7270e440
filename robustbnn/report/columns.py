"""The leaderboard's columns: what each one measures, and its value per model and run.

Every column is computed from the tidy results alone. Numeric columns hold one number per
(model, run); "best measure" columns pick, per model, the uncertainty measure with the best
value averaged over runs and report that measure's per-run values, with a companion text column
naming it. Directions come from :data:`robustbnn.results.schema.HIGHER_IS_BETTER`. The
families of columns of robustness and of dataset shift are in
:mod:`~robustbnn.report.robust_columns` and :mod:`~robustbnn.report.shift_columns`; a column's
description and the selections they share in :mod:`~robustbnn.report.column`.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from robustbnn.report.column import (
    ATTACKS,
    FIDELITY,
    OOD,
    OUT_OF_SAMPLE,
    SANITY,
    SHIFT,
    Column,
    best_measure,
    per_run,
)
from robustbnn.report.column_samples import carried
from robustbnn.report.faults import FAULTS, NUMERICAL_FAULT, find_faults, without_faults
from robustbnn.report.robust_columns import robustness_columns
from robustbnn.report.shift_columns import shift_columns
from robustbnn.results import names as n
from robustbnn.results.schema import attack_tasks, with_knobs

__all__ = ["DETECTION_EPS", "FAMILIES", "FGSM_EPS", "NUMERICAL_FAULT", "NUMERICAL_FAULTS",
           "compute_columns", "ood_auroc_rows", "task_title"]

FGSM_EPS = (0.1, 0.3)  # the leaderboard's fixed step sizes
# The column listing, per model, the cells that met NaN or inf logits (task NUMERICAL_FAULT,
# robustbnn.run.tasks._faults); it exists only when some row is flagged.
NUMERICAL_FAULTS = "numerical_faults"
DETECTION_EPS = 0.1  # adversary detection at this eps
TITLES = {n.PGD: "PGD"}  # display names of attack tasks (others: the task name itself)


def task_title(task: str) -> str:
    """An attack task's name in headers (``PGD``; a plug-in attack's own name)."""
    return TITLES.get(task, task)


def _sanity(results: pd.DataFrame) -> pd.Series:
    """Per model, the failed Carlini-style checks (with their S_attack), or ``ok``."""
    checks = results[(results["task"] == n.FGSM_SANITY) & (results["metric"] == n.PASSED)]
    names: dict[str, list[str]] = {m: [] for m in dict.fromkeys(checks["model"])}
    for model, measure, knobs, value in zip(checks["model"], checks["measure"],
                                            checks["setting"], checks["value"], strict=True):
        if value < 1:
            names[model].append(f"{measure} (S={knobs.get(n.S_ATTACK, '?')})")
    return pd.Series({m: ", ".join(dict.fromkeys(v)) or "ok" for m, v in names.items()},
                     dtype=object)


def _attack_accuracy(results: pd.DataFrame, task: str) -> list[tuple[Column, pd.Series]]:
    """Accuracy under ``task`` (PGD, plug-in attacks) at each eps, with its largest S_attack."""
    acc = with_knobs(results[(results["task"] == task) & (results["metric"] == n.ACCURACY)],
                     n.EPS, n.S_ATTACK)
    out = []
    for eps in sorted(acc[n.EPS].dropna().unique()):
        at_eps = acc[acc[n.EPS] == eps]
        s = at_eps[n.S_ATTACK].max()
        col = Column(f"{task}_accuracy_eps{eps:g}_S{s:g}",
                     f"{task_title(task)} acc ε={eps:g} S={s:g}", n.ACCURACY, aspect=ATTACKS)
        out.append((col, per_run(at_eps[at_eps[n.S_ATTACK] == s])))
    return out


def _clean(results: pd.DataFrame) -> list[tuple[Column, pd.Series]]:
    """Clean accuracy, NLL, ECE and Brier score."""
    clean = results[results["task"] == n.CLEAN]
    return [(Column(f"clean_{name}", title, name, aspect=SHIFT),
             per_run(clean[clean["metric"] == name]))
            for name, title in ((n.ACCURACY, "clean acc"), (n.NLL, "NLL"), (n.ECE, "ECE"),
                                (n.BRIER, "Brier"))]


def _fgsm_rows(results: pd.DataFrame) -> pd.DataFrame:
    """The FGSM rows with their ``eps`` and ``S_attack`` knobs as columns."""
    return with_knobs(results[results["task"] == n.FGSM], n.EPS, n.S_ATTACK)


def _fgsm(results: pd.DataFrame) -> list[tuple[Column, pd.Series]]:
    """FGSM accuracy at the leaderboard's eps, per S_attack."""
    fgsm = _fgsm_rows(results)
    acc = fgsm[fgsm["metric"] == n.ACCURACY]
    out = []
    for eps in FGSM_EPS:
        for s in sorted(acc[n.S_ATTACK].dropna().unique()):
            sel = acc[(acc[n.EPS] == eps) & (acc[n.S_ATTACK] == s)]
            out.append((Column(f"fgsm_accuracy_eps{eps:g}_S{s:g}", f"FGSM acc ε={eps:g} S={s:g}",
                               n.ACCURACY, aspect=ATTACKS), per_run(sel)))
    return out


def _attacks(results: pd.DataFrame) -> list[tuple[Column, pd.Series]]:
    """Accuracy under PGD and plug-in attacks, then targeted success at the most steps."""
    out = [column for name in attack_tasks(results)
           for column in _attack_accuracy(results, name)]
    targeted = with_knobs(results[(results["task"] == n.TARGETED)
                                  & (results["metric"] == n.TARGET_SUCCESS)], n.STEP)
    if len(targeted):
        step = targeted[n.STEP].max()
        out.append((Column(f"targeted_success_step{step:g}", f"targeted success @{step:g} steps",
                           n.TARGET_SUCCESS, aspect=ATTACKS),
                    per_run(targeted[targeted[n.STEP] == step])))
    return out


def ood_auroc_rows(results: pd.DataFrame) -> pd.DataFrame:
    """The rows "mean OOD AUROC" chooses its measure from: the AUROC of every measure the run
    scored on each OOD set, held-out classes excluded. Every measure competes: the built-in
    probability and logit measures (``energy``, ``max_logit`` and their per-sample means),
    ``extra_measures`` and plug-in measures alike."""
    return results[(results["task"] == n.OOD) & (results["metric"] == n.AUROC)
                   & ~results["dataset"].str.startswith("heldout:")]


def _detection(results: pd.DataFrame) -> list[tuple[Column, pd.Series]]:
    """Adversary detection AUROC at :data:`DETECTION_EPS` and mean OOD AUROC, each of the best
    measure, with the measure's name."""
    out: list[tuple[Column, pd.Series]] = []
    fgsm = _fgsm_rows(results)
    det = fgsm[(fgsm["metric"] == n.ADVERSARY_DETECTION) & (fgsm[n.EPS] == DETECTION_EPS)]
    if len(det):
        s = det[n.S_ATTACK].max()
        key = f"adversary_detection_eps{DETECTION_EPS:g}_S{s:g}"
        value, best = best_measure(det[det[n.S_ATTACK] == s], n.AUROC)
        out.append((Column(key, f"adv. detection AUROC ε={DETECTION_EPS:g} S={s:g}", n.AUROC,
                           aspect=ATTACKS, measure_key=f"{key}_measure"), value))
        out.append((Column(f"{key}_measure", "adv. detection measure", kind="text",
                           aspect=ATTACKS), best))
    ood = ood_auroc_rows(results)
    if len(ood):
        value, best = best_measure(ood, n.AUROC)  # per measure, the mean over the sets
        out.append((Column("ood_auroc_mean", "mean OOD AUROC", n.AUROC, aspect=OOD,
                           measure_key="ood_auroc_mean_measure"), value))
        out.append((Column("ood_auroc_mean_measure", "OOD measure", kind="text", aspect=OOD),
                    best))
    return out


def _cost_and_checks(results: pd.DataFrame) -> list[tuple[Column, pd.Series]]:
    """Prediction time, parameters, failed sanity checks and numerical faults."""
    out: list[tuple[Column, pd.Series]] = []
    cost = results[results["task"] == n.COST]
    timing = with_knobs(cost[cost["metric"] == n.SECONDS_PER_1000_PREDICTIONS], n.S_EVAL)
    if len(timing):
        s = timing[n.S_EVAL].max()
        out.append((Column(n.SECONDS_PER_1000_PREDICTIONS, f"s / 1k predictions (S={s:g})",
                           n.SECONDS_PER_1000_PREDICTIONS, fmt=".3f", timing=True,
                           aspect=SANITY), per_run(timing)))
    out.append((Column(n.PARAMETERS, n.PARAMETERS, n.PARAMETERS, fmt="d", aspect=SANITY),
                per_run(cost[cost["metric"] == n.PARAMETERS])))
    out.append((Column("sanity", "sanity checks failed", kind="text", aspect=SANITY),
                _sanity(results)))
    out.append((Column(NUMERICAL_FAULTS, "numerical faults", kind="text", aspect=SANITY),
                _faults(results)))
    return out


# The fidelity columns (docs/fidelity.md): key suffix, title and metric.
FIDELITY_COLUMNS = (("agreement", "agreement with {ref}", n.AGREEMENT),
                    ("total_variation", "TV to {ref}", n.TOTAL_VARIATION),
                    ("kl", "KL({ref} ‖ model)", n.KL_FROM_REFERENCE))


def _fidelity(results: pd.DataFrame) -> list[tuple[Column, pd.Series]]:
    """Agreement, total variation and KL of each model's predictive against the fidelity
    reference's (task ``fidelity``; the reference itself has none)."""
    rows = results[results["task"] == n.FIDELITY]
    if rows.empty:
        return []
    ref = " / ".join(sorted({str(k.get(n.REFERENCE, "?")) for k in rows["setting"]}))
    return [(Column(f"fidelity_{key}", title.format(ref=ref), metric, aspect=FIDELITY),
             per_run(rows[rows["metric"] == metric])) for key, title, metric in FIDELITY_COLUMNS]


# The families of columns, in display order.
FAMILIES = (_clean, _fgsm, _attacks, _detection, robustness_columns, shift_columns, _fidelity,
            _cost_and_checks)


def compute_columns(results: pd.DataFrame) -> tuple[list[Column], dict[str, pd.Series]]:
    """The columns present in ``results`` (with a ``run`` column) and their values.

    Returns:
        The columns in display order (:data:`FAMILIES`), and per column key either a Series
        indexed by (model, run) (numbers) or by model (text). A column without values is left
        out, unless a numerical fault falls on it: a model whose number in a column is made of
        a faulted cell has no value in it, in any run, and the column's ``attrs["faults"]``
        names its faulted cells (:func:`robustbnn.report.faults.without_faults`).

    Raises:
        MissingKnobError: If a task's rows lack a knob a column is keyed by (e.g. FGSM rows
            without ``eps``): the column would otherwise vanish silently.
    """
    cols: list[Column] = []
    values: dict[str, pd.Series] = {}
    faults = find_faults(results)
    runs = results.groupby("model", sort=False)["run"].nunique()
    for family in FAMILIES:
        for col, series in family(results):
            if col.kind == "number":
                series = without_faults(series, faults, runs)
            if len(series) or series.attrs.get(FAULTS):
                rows = carried(series)
                if rows is not None and rows.half == "score":
                    col = dataclasses.replace(col, chosen=OUT_OF_SAMPLE)
                cols.append(col)
                values[col.key] = series
    for col in cols:  # no measure is named for a number that is not shown
        faulted = list(values[col.key].attrs.get(FAULTS, {}))
        if col.measure_key in values and faulted:
            values[col.measure_key] = values[col.measure_key].drop(faulted, errors="ignore")
    return cols, values


def _faults(results: pd.DataFrame) -> pd.Series:
    """Per model, the cells that met NaN or inf logits (with the OOD set, and the runs when
    not all: :func:`robustbnn.report.faults.fault_where`), or ``none``; empty when no run had
    a fault, so the column is left out."""
    faults = find_faults(results)
    if not faults:
        return pd.Series(dtype=object)
    runs = results.groupby("model", sort=False)["run"].nunique()
    cells: dict[str, dict[str, set[int]]] = {str(m): {} for m in dict.fromkeys(results["model"])}
    for fault in faults:
        cells[fault.model].setdefault(fault.where, set()).add(fault.run)
    out = {m: ", ".join(w if len(r) == runs[m] else f"{w} in {len(r)}/{runs[m]} runs"
                        for w, r in sorted(by.items())) or "none" for m, by in cells.items()}
    return pd.Series(out, dtype=object)
