"""The leaderboard's columns: what each one measures, and its value per model and run.

Every column is computed from the tidy results alone. Numeric columns hold one number per
(model, run); "best measure" columns pick, per model, the uncertainty measure with the best
value averaged over runs and report that measure's per-run values, with a companion text column
naming it. Directions come from :data:`robustbnn.report.schema.HIGHER_IS_BETTER`.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from robustbnn.report.schema import HIGHER_IS_BETTER, knobs, with_knobs

__all__ = ["Column", "compute_columns", "knobs"]

FGSM_EPS = (0.1, 0.3)  # the leaderboard's fixed step sizes
DETECTION_EPS = 0.1  # adversary detection at this eps


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


def _per_run(rows: pd.DataFrame) -> pd.Series:
    """Mean value per (model, run): one number, as each selection holds one row per run."""
    return rows.groupby(["model", "run"], sort=False)["value"].mean()


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
    checks = results[(results["task"] == "fgsm_sanity") & (results["metric"] == "passed")]
    names: dict[str, list[str]] = {m: [] for m in dict.fromkeys(checks["model"])}
    for model, measure, setting, value in zip(checks["model"], checks["measure"],
                                              checks["setting"], checks["value"], strict=True):
        if value < 1:
            names[model].append(f"{measure} (S={knobs(setting).get('S_attack', '?')})")
    return pd.Series({m: ", ".join(dict.fromkeys(n)) or "ok" for m, n in names.items()},
                     dtype=object)


def compute_columns(results: pd.DataFrame) -> tuple[list[Column], dict[str, pd.Series]]:
    """The columns present in ``results`` (with a ``run`` column) and their values.

    Returns:
        The columns in display order, and per column key either a Series indexed by
        (model, run) (numbers) or by model (text).
    """
    cols: list[Column] = []
    values: dict[str, pd.Series] = {}

    def add(col: Column, series: pd.Series) -> None:
        if len(series):
            cols.append(col)
            values[col.key] = series

    task, metric = results["task"], results["metric"]
    clean = results[task == "clean"]
    for name, title in (("accuracy", "clean acc"), ("nll", "NLL"), ("ece", "ECE")):
        add(Column(f"clean_{name}", title, name), _per_run(clean[clean["metric"] == name]))
    fgsm = with_knobs(results[task == "fgsm"], "eps", "S_attack")
    acc = fgsm[fgsm["metric"] == "accuracy"]
    for eps in FGSM_EPS:
        for s in sorted(acc["S_attack"].dropna().unique()):
            sel = acc[(acc["eps"] == eps) & (acc["S_attack"] == s)]
            add(Column(f"fgsm_accuracy_eps{eps:g}_S{s:g}", f"FGSM acc ε={eps:g} S={s:g}",
                       "accuracy"), _per_run(sel))
    targeted = with_knobs(results[(task == "targeted") & (metric == "target_success")], "step")
    if len(targeted):
        step = targeted["step"].max()
        add(Column(f"targeted_success_step{step:g}", f"targeted success @{step:g} steps",
                   "target_success"), _per_run(targeted[targeted["step"] == step]))
    det = fgsm[(fgsm["metric"] == "adversary_detection") & (fgsm["eps"] == DETECTION_EPS)]
    if len(det):
        s = det["S_attack"].max()
        key = f"adversary_detection_eps{DETECTION_EPS:g}_S{s:g}"
        value, best = _best(det[det["S_attack"] == s], "auroc")
        add(Column(key, f"adv. detection AUROC ε={DETECTION_EPS:g} S={s:g}", "auroc"), value)
        add(Column(f"{key}_measure", "adv. detection measure", kind="text"), best)
    ood = results[(task == "ood") & (metric == "auroc")
                  & ~results["dataset"].str.startswith("heldout:")]
    if len(ood):
        mean = ood.groupby(["model", "run", "measure"], sort=True)["value"].mean().reset_index()
        value, best = _best(mean, "auroc")
        add(Column("ood_auroc_mean", "mean OOD AUROC", "auroc"), value)
        add(Column("ood_auroc_mean_measure", "OOD measure", kind="text"), best)
    cost = with_knobs(results[task == "cost"], "S_eval")
    timing = cost[cost["metric"] == "seconds_per_1000_predictions"]
    if len(timing):
        s = timing["S_eval"].max()
        add(Column("seconds_per_1000_predictions", f"s / 1k predictions (S={s:g})",
                   "seconds_per_1000_predictions", fmt=".3f", timing=True), _per_run(timing))
    add(Column("parameters", "parameters", "parameters", fmt="d"),
        _per_run(cost[cost["metric"] == "parameters"]))
    add(Column("sanity", "sanity checks failed", kind="text"), _sanity(results))
    return cols, values
