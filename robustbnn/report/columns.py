"""The leaderboard's columns: what each one measures, and its value per model and run.

Every column is computed from the tidy results alone. Numeric columns hold one number per
(model, run); "best measure" columns pick, per model, the uncertainty measure with the best
value averaged over runs and report that measure's per-run values, with a companion text column
naming it. Directions come from :data:`robustbnn.results.schema.HIGHER_IS_BETTER`.
"""

from __future__ import annotations

import dataclasses

import pandas as pd
from scipy.integrate import trapezoid

from robustbnn.results import names as n
from robustbnn.results.schema import HIGHER_IS_BETTER, attack_tasks, group_mean, with_knobs

__all__ = ["DETECTION_EPS", "FGSM_EPS", "NUMERICAL_FAULT", "NUMERICAL_FAULTS", "Column",
           "compute_columns", "task_title"]

FGSM_EPS = (0.1, 0.3)  # the leaderboard's fixed step sizes
# The task of the rows of cells that met NaN or inf logits (robustbnn.run.tasks._faults), and
# their knob naming the cell's task; the column "numerical_faults" lists them per model, and
# exists only when some row is flagged.
NUMERICAL_FAULT = "numerical_fault"
IN_TASK = "in_task"
NUMERICAL_FAULTS = "numerical_faults"
DETECTION_EPS = 0.1  # adversary detection at this eps
TITLES = {n.PGD: "PGD"}  # display names of attack tasks (others: the task name itself)


def task_title(task: str) -> str:
    """An attack task's name in headers (``PGD``; a plug-in attack's own name)."""
    return TITLES.get(task, task)


@dataclasses.dataclass(frozen=True)
class Column:
    """One leaderboard column.

    Attributes:
        key: Stable identifier: the CSV/JSON field and the value of ``--sort``.
        title: Header in Markdown and HTML.
        metric: The metric it reports (a ``HIGHER_IS_BETTER`` key); "" for text columns.
        kind: ``"number"`` or ``"text"``.
        fmt: Format spec of a number in Markdown/HTML (``"d"``: an integer with separators).
        timing: Machine-dependent (wall-clock); excluded from the CI regression check.
    """

    key: str
    title: str
    metric: str = ""
    kind: str = "number"
    fmt: str = ".4f"
    timing: bool = False

    @property
    def higher_is_better(self) -> bool | None:
        """The sort direction from ``HIGHER_IS_BETTER``; None for text columns."""
        return HIGHER_IS_BETTER[self.metric] if self.kind == "number" else None


# The logit measures came after the headline "mean OOD AUROC" was fixed; it keeps choosing
# among the others, so its column means what it did (they are in ood.md, per set).
LOGIT_MEASURES = ("energy", "mean_energy", "max_logit", "mean_max_logit")


def _per_run(rows: pd.DataFrame) -> pd.Series:
    """Mean value per (model, run): one number, as each selection holds one row per run (NaN
    when one of them is NaN)."""
    return group_mean(rows, ["model", "run"])


def _best(rows: pd.DataFrame, metric: str) -> tuple[pd.Series, pd.Series]:
    """Per model, the measure with the best run-averaged value; its per-run values and name.

    ``rows`` hold one value per (model, run, measure). Ties go to the first measure by name.
    """
    per = rows.groupby(["model", "measure", "run"], sort=True)["value"].mean()
    avg = per.groupby(["model", "measure"], sort=True).mean().reset_index()
    avg = avg.sort_values(["model", "measure"], kind="mergesort")
    ascending = not HIGHER_IS_BETTER[metric]
    avg = avg.sort_values(["model", "value"], ascending=[True, ascending], kind="mergesort")
    best = avg.groupby("model", sort=False).head(1).set_index("model")["measure"]
    chosen = per.reset_index()
    chosen = chosen[chosen["measure"] == chosen["model"].map(best)]
    return chosen.set_index(["model", "run"])["value"], best


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
                     f"{task_title(task)} acc ε={eps:g} S={s:g}", n.ACCURACY)
        out.append((col, _per_run(at_eps[at_eps[n.S_ATTACK] == s])))
    return out


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
    return pd.Series({str(m): "upper bound (eot_not_converged)" if m in raised else "converged"
                      for m in models}, dtype=object)


def _robustness(results: pd.DataFrame) -> list[tuple[Column, pd.Series]]:
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
        col = Column(f"robust_accuracy_allk_eps{eps:g}",
                     f"PGD-EOT all-{k} acc ε={eps:g} (S={s}×{steps})", n.ALL_K_ACCURACY)
        out.append((col, _per_run(at)))
        out.append((Column(f"robust_accuracy_allk_eps{eps:g}_bound", f"ε={eps:g} acc is",
                           kind="text"), _bound(results, eps, at["model"].unique())))
    det = with_knobs(results[(task == n.DETECTOR_AWARE) & (metric == n.DETECTION_AWARE_ACCURACY)],
                     n.EPS, n.ADAPTIVE, n.FPR)
    if len(det):
        eps, fpr = det[n.EPS].min(), det[n.FPR].max()
        at = det[(det[n.EPS] == eps) & (det[n.FPR] == fpr)]
        adaptive = at[at[n.ADAPTIVE] == True]  # noqa: E712 - object column of bools
        value, best = _best(adaptive, n.DETECTION_AWARE_ACCURACY)
        key = f"detection_aware_eps{eps:g}"
        out.append((Column(key, f"det.-aware acc ε={eps:g} adaptive ({fpr:.0%} FPR)",
                           n.DETECTION_AWARE_ACCURACY), value))
        plain = at[(at[n.ADAPTIVE] == False)  # noqa: E712
                   & (at["measure"] == at["model"].map(best))]
        out.append((Column(f"{key}_nonadaptive", f"det.-aware acc ε={eps:g} non-adaptive",
                           n.DETECTION_AWARE_ACCURACY), _per_run(plain)))
        out.append((Column(f"{key}_measure", "detector", kind="text"), best))
    adv = with_knobs(results[(task == n.ADV_OOD) & (metric == n.AUROC)], n.EPS)
    if len(adv):
        eps = adv[n.EPS].max()
        mean = (adv[adv[n.EPS] == eps].groupby(["model", "run", "measure"], sort=True)["value"]
                .mean().reset_index())
        value, best = _best(mean, n.AUROC)
        out.append((Column(f"adv_ood_auroc_eps{eps:g}", f"worst-case OOD AUROC ε={eps:g}",
                           n.AUROC), value))
        clean = (adv[adv[n.EPS] == 0].groupby(["model", "run", "measure"], sort=True)["value"]
                 .mean().reset_index())
        clean = clean[clean["measure"] == clean["model"].map(best)]
        out.append((Column("adv_ood_auroc_clean", "same OOD images clean AUROC", n.AUROC),
                    clean.set_index(["model", "run"])["value"]))
        out.append((Column(f"adv_ood_auroc_eps{eps:g}_measure", "worst-case OOD measure",
                           kind="text"), best))
    if (task == n.ROBUST_FLAGS).any():
        out.append((Column("robust_flags", "robustness flags", kind="text"), _flags(results)))
    return out


def _rotation_auc(rows: pd.DataFrame) -> pd.Series:
    """Per (model, run), the area under accuracy against angle by the trapezoid rule, divided
    by the angle range: the accuracy averaged over rotations, in [0, 1]."""
    out = {}
    for key, group in rows.groupby(["model", "run"], sort=False):
        curve = group.groupby(n.ANGLE)["value"].mean().sort_index()
        span = curve.index[-1] - curve.index[0]
        out[key] = (float(trapezoid(curve.values, curve.index)) / span if span > 0
                    else float(curve.iloc[0]))
    return pd.Series(out, dtype="float64").rename_axis(["model", "run"])


def _shift(results: pd.DataFrame) -> list[tuple[Column, pd.Series]]:
    """Calibration under dataset shift: the area under accuracy against rotation angle, the
    ECE averaged over the angles, and accuracy and ECE averaged over the MNIST-C corruptions."""
    rows = results[results["task"] == n.SHIFT]
    if rows.empty:
        return []
    rows = with_knobs(rows, n.SHIFT)
    out: list[tuple[Column, pd.Series]] = []
    rotated = rows[rows[n.SHIFT] == n.SHIFT_ROTATED]
    if len(rotated):
        rotated = with_knobs(rotated, n.ANGLE)
        lo, hi = rotated[n.ANGLE].min(), rotated[n.ANGLE].max()
        count = rotated[n.ANGLE].nunique()
        acc = rotated[rotated["metric"] == n.ACCURACY]
        out.append((Column("rotated_accuracy_auc", f"rotated acc AUC {lo:g}–{hi:g}°",
                           n.ACCURACY), _rotation_auc(acc)))
        ece = rotated[rotated["metric"] == n.ECE]
        out.append((Column("rotated_ece_mean", f"rotated ECE (mean of {count} angles)", n.ECE),
                    _per_run(ece)))
    corrupted = rows[rows[n.SHIFT] == n.SHIFT_CORRUPTED]
    if len(corrupted):
        count = with_knobs(corrupted, n.CORRUPTION)[n.CORRUPTION].nunique()
        for metric, title in ((n.ACCURACY, "acc"), (n.ECE, "ECE")):
            out.append((Column(f"corrupted_{metric}_mean",
                               f"MNIST-C {title} (mean of {count})", metric),
                        _per_run(corrupted[corrupted["metric"] == metric])))
    return out


def compute_columns(results: pd.DataFrame) -> tuple[list[Column], dict[str, pd.Series]]:
    """The columns present in ``results`` (with a ``run`` column) and their values.

    Returns:
        The columns in display order, and per column key either a Series indexed by
        (model, run) (numbers) or by model (text).

    Raises:
        MissingKnobError: If a task's rows lack a knob a column is keyed by (e.g. FGSM rows
            without ``eps``): the column would otherwise vanish silently.
    """
    cols: list[Column] = []
    values: dict[str, pd.Series] = {}

    def add(col: Column, series: pd.Series) -> None:
        if len(series):
            cols.append(col)
            values[col.key] = series

    task, metric = results["task"], results["metric"]
    clean = results[task == n.CLEAN]
    for name, title in ((n.ACCURACY, "clean acc"), (n.NLL, "NLL"), (n.ECE, "ECE"),
                        (n.BRIER, "Brier")):
        add(Column(f"clean_{name}", title, name), _per_run(clean[clean["metric"] == name]))
    fgsm = with_knobs(results[task == n.FGSM], n.EPS, n.S_ATTACK)
    acc = fgsm[fgsm["metric"] == n.ACCURACY]
    for eps in FGSM_EPS:
        for s in sorted(acc[n.S_ATTACK].dropna().unique()):
            sel = acc[(acc[n.EPS] == eps) & (acc[n.S_ATTACK] == s)]
            add(Column(f"fgsm_accuracy_eps{eps:g}_S{s:g}", f"FGSM acc ε={eps:g} S={s:g}",
                       n.ACCURACY), _per_run(sel))
    for name in attack_tasks(results):
        for col, series in _attack_accuracy(results, name):
            add(col, series)
    targeted = with_knobs(results[(task == n.TARGETED) & (metric == n.TARGET_SUCCESS)], n.STEP)
    if len(targeted):
        step = targeted[n.STEP].max()
        add(Column(f"targeted_success_step{step:g}", f"targeted success @{step:g} steps",
                   n.TARGET_SUCCESS), _per_run(targeted[targeted[n.STEP] == step]))
    det = fgsm[(fgsm["metric"] == n.ADVERSARY_DETECTION) & (fgsm[n.EPS] == DETECTION_EPS)]
    if len(det):
        s = det[n.S_ATTACK].max()
        key = f"adversary_detection_eps{DETECTION_EPS:g}_S{s:g}"
        value, best = _best(det[det[n.S_ATTACK] == s], n.AUROC)
        add(Column(key, f"adv. detection AUROC ε={DETECTION_EPS:g} S={s:g}", n.AUROC), value)
        add(Column(f"{key}_measure", "adv. detection measure", kind="text"), best)
    ood = results[(task == n.OOD) & (metric == n.AUROC)
                  & ~results["dataset"].str.startswith("heldout:")
                  & ~results["measure"].isin(LOGIT_MEASURES)]
    if len(ood):
        mean = ood.groupby(["model", "run", "measure"], sort=True)["value"].mean().reset_index()
        value, best = _best(mean, n.AUROC)
        add(Column("ood_auroc_mean", "mean OOD AUROC", n.AUROC), value)
        add(Column("ood_auroc_mean_measure", "OOD measure", kind="text"), best)
    for col, series in _robustness(results):
        add(col, series)
    for col, series in _shift(results):
        add(col, series)
    cost = results[task == n.COST]
    timing = with_knobs(cost[cost["metric"] == n.SECONDS_PER_1000_PREDICTIONS], n.S_EVAL)
    if len(timing):
        s = timing[n.S_EVAL].max()
        add(Column(n.SECONDS_PER_1000_PREDICTIONS, f"s / 1k predictions (S={s:g})",
                   n.SECONDS_PER_1000_PREDICTIONS, fmt=".3f", timing=True), _per_run(timing))
    add(Column(n.PARAMETERS, n.PARAMETERS, n.PARAMETERS, fmt="d"),
        _per_run(cost[cost["metric"] == n.PARAMETERS]))
    add(Column("sanity", "sanity checks failed", kind="text"), _sanity(results))
    add(Column(NUMERICAL_FAULTS, "numerical faults", kind="text"), _faults(results))
    return cols, values


def _faults(results: pd.DataFrame) -> pd.Series:
    """Per model, the tasks whose cells met NaN or inf logits (with the OOD set, and the runs
    when not all), or ``none``; empty when no run had a fault, so the column is left out."""
    rows = results[results["task"] == NUMERICAL_FAULT]
    if rows.empty:
        return pd.Series(dtype=object)
    rows = with_knobs(rows, IN_TASK)
    runs = results.groupby("model", sort=False)["run"].nunique()
    out: dict[str, str] = {str(m): "none" for m in dict.fromkeys(results["model"])}
    for model, group in rows.groupby("model", sort=False):
        items = []
        for (task, dataset), by in group.groupby([IN_TASK, "dataset"], sort=True)["run"]:
            where = f"{task} on {dataset}" if task in ("ood", "adv_ood") else task
            count = by.nunique()
            items.append(where if count == runs[model] else f"{where} in {count}/{runs[model]} "
                         "runs")
        out[str(model)] = ", ".join(items)
    return pd.Series(out, dtype=object)
