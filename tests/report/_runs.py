"""Synthetic run folders: tidy results with known numbers, written as `robustbnn bench` does."""

from __future__ import annotations

from multiprocessing.synchronize import Barrier
from pathlib import Path

from robustbnn.results.schema import Result, setting
from robustbnn.results.store import write_json, write_results

MEASURES = ("bald", "max_prob")


def fidelity_rows(model: str, *, seed: int = 0, tv: float = 0.1) -> list[Result]:
    """The fidelity cell's three rows for one model against reference ``ref``."""
    knobs = setting(S_eval=4, reference="ref")
    return [Result(model, seed, "fidelity", "toy", knobs, "", metric, value)
            for metric, value in (("agreement", 1 - tv), ("total_variation", tv),
                                  ("kl_from_reference", 2 * tv))]


def rows(model: str, *, seed: int = 0, acc: float = 0.9, nll: float = 0.3, ece: float = 0.05,
         fgsm: float = 0.5, success: float = 0.4, det: float = 0.7, ood: float = 0.8,
         seconds: float = 1.0, params: int = 1000) -> list[Result]:
    """Every leaderboard task for one model; measure ``bald`` beats ``max_prob`` by 0.05."""
    out = [Result(model, seed, "clean", "toy", setting(S_eval=4), "", m, v)
           for m, v in (("accuracy", acc), ("nll", nll), ("ece", ece))]
    out += [Result(model, seed, "cost", "toy", setting(S_eval=4), "",
                   "seconds_per_1000_predictions", seconds),
            Result(model, seed, "cost", "toy", setting(S_eval=4), "", "parameters", params)]
    for s in (1, 32):
        for eps, a in ((0.1, fgsm), (0.3, fgsm / 2)):
            knobs = setting(eps=eps, S_attack=s, S_eval=4, objective="predictive", label="true",
                            clip=True)
            out.append(Result(model, seed, "fgsm", "toy", knobs, "", "accuracy", a))
            for i, measure in enumerate(MEASURES):
                out.append(Result(model, seed, "fgsm", "toy", knobs, measure,
                                  "adversary_detection", det - 0.05 * i))
        out.append(Result(model, seed, "fgsm_sanity", "toy", setting(S_attack=s),
                          "gradient_nonzero", "passed", 1.0))
    for step, value in ((0, 0.0), (100, success)):
        knobs = setting(step=step, step_size=0.01, target=0, S_attack=1, S_eval=4,
                        objective="predictive", n=9)
        out.append(Result(model, seed, "targeted", "toy", knobs, "", "target_success", value))
    for dataset, shift in (("uniform", 0.02), ("gaussian", -0.02)):
        for i, measure in enumerate(MEASURES):
            for metric in ("auroc", "aupr_in", "aupr_out", "fpr_at_95_tpr"):
                knobs = setting(S_eval=4, n_in=10, n_out=10)
                out.append(Result(model, seed, "ood", dataset, knobs, measure, metric,
                                  ood + shift - 0.05 * i))
    return out


def pgd_rows(model: str, *, seed: int = 0, task: str = "pgd",
             acc: dict[tuple[float, int], float] | None = None,
             measures: tuple[str, ...] = MEASURES) -> list[Result]:
    """PGD-EOT rows as the bench writes them: accuracy per (eps, S_attack), detection per measure.

    ``acc`` maps ``(eps, S_attack)`` to accuracy; adversary detection is ``0.6 + accuracy / 10``
    for the first measure and 0.05 less for each next one.
    """
    acc = acc or {(0.1, 1): 0.5, (0.1, 32): 0.4, (0.3, 1): 0.2, (0.3, 32): 0.1}
    out = []
    for (eps, s), value in acc.items():
        knobs = setting(eps=eps, S_attack=s, S_eval=100, steps=40, restarts=1, step_size=0.01,
                        objective="expected", label="true", n=500)
        out.append(Result(model, seed, task, "toy", knobs, "", "accuracy", value))
        for i, measure in enumerate(measures):
            out.append(Result(model, seed, task, "toy", knobs, measure, "mean_uncertainty",
                              0.2 + value))
            out.append(Result(model, seed, task, "toy", knobs, measure, "adversary_detection",
                              0.6 + value / 10 - 0.05 * i))
    return out


def write_run(run_dir: Path, results: list[Result], *, seed: int = 0) -> Path:
    """A run folder with ``results.csv/.jsonl`` and a minimal ``run.json``."""
    write_results(run_dir, results)
    write_json(run_dir / "run.json", {"seed": seed, "suite": "test", "device": "cpu",
                                      "config": {"ood_preprocessing": "unit"}})
    return run_dir


def render_together(barrier: Barrier, run: Path, out: Path) -> None:
    """Wait for every sibling process, then render ``run`` into ``out`` (a spawn target)."""
    from robustbnn.report.render import render

    barrier.wait(timeout=120)
    render([run], out)
