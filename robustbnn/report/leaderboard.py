"""The leaderboard: a pure function of a results table."""

from __future__ import annotations

import pandas as pd

from robustbnn.report.schema import HIGHER_IS_BETTER


def _knob(setting: str, key: str) -> str | None:
    for part in setting.split(";"):
        k, _, v = part.partition("=")
        if k == key:
            return v
    return None


def leaderboard(results: pd.DataFrame) -> pd.DataFrame:
    """One row per model: clean accuracy/NLL/ECE, FGSM accuracy, best-measure OOD AUROC.

    Sorted by clean accuracy (descending); see ``HIGHER_IS_BETTER`` for directions.
    """
    models = list(dict.fromkeys(results["model"]))
    table = pd.DataFrame(index=pd.Index(models, name="model"))
    clean = results[results["task"] == "clean"]
    for metric in ("accuracy", "nll", "ece"):
        sel = clean[clean["metric"] == metric]
        table[f"clean {metric}"] = sel.groupby("model")["value"].mean()
    fgsm = results[(results["task"] == "fgsm") & (results["metric"] == "accuracy")]
    if len(fgsm):
        eps = fgsm["setting"].map(lambda s: float(_knob(s, "eps")))
        s_att = fgsm["setting"].map(lambda s: int(_knob(s, "S_attack")))
        for e in sorted({x for x in eps if x in (0.1, 0.3)} or set(eps)):
            for s in sorted(set(s_att)):
                sel = fgsm[(eps == e) & (s_att == s)]
                table[f"FGSM acc eps={e:g} S={s}"] = sel.groupby("model")["value"].mean()
    targeted = results[(results["task"] == "targeted") & (results["metric"] == "target_success")]
    if len(targeted):
        step = targeted["setting"].map(lambda s: int(_knob(s, "step")))
        last = targeted[step == step.max()]
        table[f"targeted success step={step.max()}"] = last.groupby("model")["value"].mean()
    checks = results[(results["task"] == "fgsm_sanity") & (results["metric"] == "passed")]
    if len(checks):
        def failed(sel: pd.DataFrame) -> str:
            bad = sel[sel["value"] < 1]
            names = [f"{m} (S={_knob(k, 'S_attack')})" for m, k in zip(bad["measure"],
                                                                        bad["setting"])]
            return ", ".join(dict.fromkeys(names)) or "ok"
        table["sanity"] = checks.groupby("model")[["measure", "setting", "value"]].apply(failed)
    ood = results[(results["task"] == "ood") & (results["metric"] == "auroc")]
    for dataset in dict.fromkeys(ood["dataset"]):
        sel = ood[ood["dataset"] == dataset]
        per = sel.groupby(["model", "measure"])["value"].mean().reset_index()
        best = per.loc[per.groupby("model")["value"].idxmax()].set_index("model")
        table[f"OOD AUROC {dataset}"] = best["value"]
        table[f"best measure {dataset}"] = best["measure"]
    return table.sort_values("clean accuracy", ascending=not HIGHER_IS_BETTER["accuracy"])


def to_markdown(table: pd.DataFrame, legend: str) -> str:
    """GitHub Markdown: a header stating the order, the table, and the protocol legend."""
    body = table.reset_index().to_markdown(index=False, floatfmt=".4f")
    return (
        "# robustbnn leaderboard\n\n"
        "Sorted by clean accuracy (higher is better). Accuracies and AUROCs are fractions.\n\n"
        f"{body}\n\n{legend}\n"
    )
