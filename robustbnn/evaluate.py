"""Evaluation tasks of a bench run, each returning tidy :class:`Result` rows.

Every evaluation draws fresh posterior samples from its own generator, independent of the
samples an attack used (PITFALLS.md §1).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from robustbnn.attacks import FGSM
from robustbnn.metrics import aupr_in, aupr_out, auroc, fpr_at_95_tpr
from robustbnn.metrics.classification import accuracy, ece, nll
from robustbnn.ood import UNCERTAINTIES
from robustbnn.predict import sample_probs
from robustbnn.report.schema import Result, setting

RANKING = {"auroc": auroc, "aupr_in": aupr_in, "aupr_out": aupr_out,
           "fpr_at_95_tpr": fpr_at_95_tpr}
ATTACK_ROWS_PER_CHUNK = 16_000  # S_attack x B rows per gradient pass


def uncertainty_scores(probs: Tensor) -> dict[str, np.ndarray]:
    """Every registered uncertainty measure of probs (S, B, C), as numpy arrays (B,)."""
    return {m: UNCERTAINTIES.get(m)(probs).double().cpu().numpy() for m in UNCERTAINTIES.names()}


def clean_rows(probs: Tensor, y: Tensor, *, model: str, seed: int, dataset: str) -> list[Result]:
    """Accuracy, NLL and ECE of the MC predictive on clean test data."""
    mean = probs.mean(0)
    knobs = setting(S_eval=probs.shape[0])
    return [Result(model, seed, "clean", dataset, knobs, "", name, fn(mean, y))
            for name, fn in (("accuracy", accuracy), ("nll", nll), ("ece", ece))]


def fgsm_rows(
    model: torch.nn.Module,
    x: Tensor,
    y: Tensor,
    *,
    eps_grid: tuple[float, ...],
    attack: FGSM,
    s_eval: int,
    attack_generator: torch.Generator,
    eval_generator: torch.Generator,
    name: str,
    seed: int,
    dataset: str,
    clean_scores: dict[str, np.ndarray] | None = None,
) -> list[Result]:
    """FGSM accuracy, mean uncertainty and detection AUROCs for every step size in ``eps_grid``.

    The single-step FGSM direction does not depend on eps, so one MC gradient (with
    ``attack.n_samples`` samples) serves the whole grid; each eps is then evaluated with
    ``s_eval`` fresh samples. Per measure, ``adversary_detection`` is the AUROC of clean test
    points (0) against their adversarial versions (1) and ``error_detection`` the AUROC of
    misclassified (1) against correct (0) adversarial points (omitted when all are one kind).
    The ``gradient_nonzero`` row is the fraction of examples whose gradient sign is not all 0.
    """
    batch = max(1, ATTACK_ROWS_PER_CHUNK // attack.n_samples)
    direction = torch.cat([
        attack.direction(model, x[i : i + batch], y[i : i + batch], generator=attack_generator,
                         name=name)
        for i in range(0, x.shape[0], batch)
    ])  # sign of the gradient, (B, *)
    base = setting(S_attack=attack.n_samples, objective=attack.objective, label=attack.label)
    nonzero = direction.flatten(1).abs().sum(1).gt(0).double().mean().item()
    rows = [Result(name, seed, "fgsm_sanity", dataset, base, "", "gradient_nonzero", nonzero)]
    for eps in eps_grid:
        x_adv = x + eps * direction
        if attack.clip:
            x_adv = x_adv.clamp(0.0, 1.0)
        probs = sample_probs(model, x_adv, s_eval, generator=eval_generator, name=name)
        knobs = setting(eps=float(eps), S_attack=attack.n_samples, S_eval=s_eval,
                        objective=attack.objective, label=attack.label, clip=attack.clip)
        wrong = (probs.mean(0).argmax(-1) != y).double().cpu().numpy()
        rows.append(Result(name, seed, "fgsm", dataset, knobs, "", "accuracy", 1 - wrong.mean()))
        for measure, score in uncertainty_scores(probs).items():
            rows.append(Result(name, seed, "fgsm", dataset, knobs, measure, "mean_uncertainty",
                               float(score.mean())))
            if clean_scores is not None:
                labels = np.r_[np.zeros(len(score)), np.ones(len(score))]
                rows.append(Result(name, seed, "fgsm", dataset, knobs, measure,
                                   "adversary_detection",
                                   auroc(labels, np.r_[clean_scores[measure], score])))
            if 0 < wrong.sum() < len(wrong):
                rows.append(Result(name, seed, "fgsm", dataset, knobs, measure,
                                   "error_detection", auroc(wrong, score)))
    return rows


def ood_rows(
    scores_in: dict[str, np.ndarray],
    probs_out: Tensor,
    *,
    ood_name: str,
    name: str,
    seed: int,
) -> list[Result]:
    """OOD detection (OOD = positive class) for every uncertainty measure and ranking metric."""
    scores_out = uncertainty_scores(probs_out)
    knobs = setting(S_eval=probs_out.shape[0], n_in=len(next(iter(scores_in.values()))),
                    n_out=probs_out.shape[1])
    rows = []
    for measure, s_in in scores_in.items():
        labels = np.r_[np.zeros(len(s_in)), np.ones(len(scores_out[measure]))]
        scores = np.r_[s_in, scores_out[measure]]
        for metric, fn in RANKING.items():
            rows.append(Result(name, seed, "ood", ood_name, knobs, measure, metric,
                               fn(labels, scores)))
    return rows
