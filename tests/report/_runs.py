"""Synthetic run folders: tidy results with known numbers, written as `robustbnn bench` does."""

from __future__ import annotations

from pathlib import Path

from robustbnn.report.schema import Result
from robustbnn.report.store import write_json, write_results

MEASURES = ("bald", "max_prob")


def rows(model: str, *, seed: int = 0, acc: float = 0.9, nll: float = 0.3, ece: float = 0.05,
         fgsm: float = 0.5, success: float = 0.4, det: float = 0.7, ood: float = 0.8,
         seconds: float = 1.0, params: int = 1000) -> list[Result]:
    """Every leaderboard task for one model; measure ``bald`` beats ``max_prob`` by 0.05."""
    out = [Result(model, seed, "clean", "toy", "S_eval=4", "", m, v)
           for m, v in (("accuracy", acc), ("nll", nll), ("ece", ece))]
    out += [Result(model, seed, "cost", "toy", "S_eval=4", "", "seconds_per_1000_predictions",
                   seconds),
            Result(model, seed, "cost", "toy", "S_eval=4", "", "parameters", params)]
    for s in (1, 32):
        for eps, a in ((0.1, fgsm), (0.3, fgsm / 2)):
            knobs = f"eps={eps};S_attack={s};S_eval=4;objective=predictive;label=true;clip=True"
            out.append(Result(model, seed, "fgsm", "toy", knobs, "", "accuracy", a))
            for i, measure in enumerate(MEASURES):
                out.append(Result(model, seed, "fgsm", "toy", knobs, measure,
                                  "adversary_detection", det - 0.05 * i))
        out.append(Result(model, seed, "fgsm_sanity", "toy", f"S_attack={s}",
                          "gradient_nonzero", "passed", 1.0))
    for step, value in ((0, 0.0), (100, success)):
        knobs = f"step={step};step_size=0.01;target=0;S_attack=1;S_eval=4;objective=predictive;n=9"
        out.append(Result(model, seed, "targeted", "toy", knobs, "", "target_success", value))
    for dataset, shift in (("uniform", 0.02), ("gaussian", -0.02)):
        for i, measure in enumerate(MEASURES):
            for metric in ("auroc", "aupr_in", "aupr_out", "fpr_at_95_tpr"):
                out.append(Result(model, seed, "ood", dataset, "S_eval=4;n_in=10;n_out=10",
                                  measure, metric, ood + shift - 0.05 * i))
    return out


def write_run(run_dir: Path, results: list[Result], *, seed: int = 0) -> Path:
    """A run folder with ``results.csv/.jsonl`` and a minimal ``run.json``."""
    write_results(run_dir, results)
    write_json(run_dir / "run.json", {"seed": seed, "suite": "test", "device": "cpu",
                                      "config": {"ood_preprocessing": "unit"}})
    return run_dir
