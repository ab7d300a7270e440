"""Evaluation tasks of a bench run, each returning tidy :class:`Result` rows.

Every evaluation draws fresh posterior samples from its own generator, independent of the
samples an attack used (PITFALLS.md §1).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from robustbnn.attacks import FGSM, TargetedIFGSM, exclude_target, targeted_curve
from robustbnn.attacks.sanity import (Check, accuracy_monotone, beats_random_noise,
                                      fixed_randomness_succeeds)
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
    The ``fgsm_sanity`` rows of check ``gradient_nonzero`` hold the fraction of examples whose
    gradient sign is not all 0 (passed when every example has one).
    """
    batch = max(1, ATTACK_ROWS_PER_CHUNK // attack.n_samples)
    direction = torch.cat([
        attack.direction(model, x[i : i + batch], y[i : i + batch], generator=attack_generator,
                         name=name)
        for i in range(0, x.shape[0], batch)
    ])  # sign of the gradient, (B, *)
    base = setting(S_attack=attack.n_samples, objective=attack.objective, label=attack.label)
    nonzero = direction.flatten(1).abs().sum(1).gt(0).double().mean().item()
    rows = check_rows(Check(nonzero, nonzero == 1.0, {}), "gradient_nonzero", model=name,
                      seed=seed, dataset=dataset, knobs=base)
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
    scores_out: dict[str, np.ndarray],
    *,
    s_eval: int,
    ood_name: str,
    name: str,
    seed: int,
) -> list[Result]:
    """OOD detection (OOD = positive class) for every uncertainty measure and ranking metric.

    Args:
        scores_in: Per-measure scores of the in-distribution test points, each (N_in,).
        scores_out: Per-measure scores of the OOD points, each (N_out,).
        s_eval: Posterior samples behind the scores, for the rows' setting.
        ood_name: The OOD set, the rows' ``dataset``.
        name: Model name.
        seed: Run seed.
    """
    knobs = setting(S_eval=s_eval, n_in=len(next(iter(scores_in.values()))),
                    n_out=len(next(iter(scores_out.values()))))
    rows = []
    for measure, s_in in scores_in.items():
        labels = np.r_[np.zeros(len(s_in)), np.ones(len(scores_out[measure]))]
        scores = np.r_[s_in, scores_out[measure]]
        for metric, fn in RANKING.items():
            rows.append(Result(name, seed, "ood", ood_name, knobs, measure, metric,
                               fn(labels, scores)))
    return rows


def check_rows(check: Check, check_name: str, *, model: str, seed: int, dataset: str,
               knobs: str) -> list[Result]:
    """A sanity check as two ``fgsm_sanity`` rows: its ``value`` and ``passed`` (1 or 0)."""
    return [Result(model, seed, "fgsm_sanity", dataset, knobs, check_name, "value", check.value),
            Result(model, seed, "fgsm_sanity", dataset, knobs, check_name, "passed",
                   float(check.passed))]


def sanity_rows(
    model: torch.nn.Module,
    x: Tensor,
    y: Tensor,
    *,
    attack: FGSM,
    fgsm: list[Result],
    s_eval: int,
    attack_generator: torch.Generator,
    eval_generator: torch.Generator,
    member_generator: torch.Generator,
    name: str,
    seed: int,
    dataset: str,
    tol: float = 0.01,
) -> list[Result]:
    """The Carlini et al. (2019) checks of one FGSM setting, beyond ``gradient_nonzero``.

    * ``accuracy_monotone``: the largest rise of the ``fgsm`` accuracy rows with eps (passed
      when at most ``tol``, the MC evaluation noise allowed);
    * ``beats_random_noise``: accuracy under ±eps random sign noise minus accuracy under
      ``attack`` at ``attack.eps`` on (x, y) (passed when ≥ −``tol``);
    * ``fixed_randomness_succeeds``: the accuracy drop that ``attack`` causes on one frozen
      posterior sample (passed when positive).

    Args:
        model: A registry model.
        x: Inputs for the two attack checks, shape (B, *).
        y: Labels, shape (B,).
        attack: The FGSM setting, with the eps to check at.
        fgsm: The setting's rows from :func:`fgsm_rows`.
        s_eval: Fresh evaluation samples.
        attack_generator: Source of the attack's samples and the noise.
        eval_generator: Source of the evaluation samples.
        member_generator: Its state picks the frozen sample.
        name: Model name.
        seed: Run seed, for the rows.
        dataset: Dataset name, for the rows.
        tol: MC-noise tolerance of the first two checks.
    """
    knobs = setting(S_attack=attack.n_samples, objective=attack.objective, label=attack.label)
    acc = [(float(_knob(r.setting, "eps")), r.value) for r in fgsm if r.metric == "accuracy"]
    rows = []
    if acc:
        eps, values = zip(*acc, strict=True)
        rows += check_rows(accuracy_monotone(eps, values, tol=tol), "accuracy_monotone",
                           model=name, seed=seed, dataset=dataset, knobs=knobs)
    at = setting(eps=float(attack.eps), S_attack=attack.n_samples, S_eval=s_eval,
                 objective=attack.objective, label=attack.label)
    noise = beats_random_noise(model, x, y, attack, s_eval=s_eval, name=name, tol=tol,
                               attack_generator=attack_generator, eval_generator=eval_generator)
    rows += check_rows(noise, "beats_random_noise", model=name, seed=seed, dataset=dataset,
                       knobs=at)
    frozen = fixed_randomness_succeeds(model, x, y, attack, member=member_generator,
                                       attack_generator=attack_generator, name=name)
    rows += check_rows(frozen, "fixed_randomness_succeeds", model=name, seed=seed,
                       dataset=dataset, knobs=at)
    return rows


def _knob(knobs: str, key: str) -> str | None:
    for part in knobs.split(";"):
        k, _, v = part.partition("=")
        if k == key:
            return v
    return None


def targeted_rows(
    model: torch.nn.Module,
    x: Tensor,
    y: Tensor,
    *,
    attack: TargetedIFGSM,
    s_eval: int,
    attack_generator: torch.Generator,
    eval_generator: torch.Generator,
    name: str,
    seed: int,
    dataset: str,
) -> list[Result]:
    """The targeted attack's curve (Li & Gal Fig. 7) as tidy ``targeted`` rows, one per step.

    The examples of class ``attack.target_class`` are dropped first. Per checkpoint: metrics
    ``accuracy`` (on the true label), ``target_success``, ``linf`` and ``l2`` (mean distortion)
    with an empty measure, and ``mean_uncertainty`` per measure.
    """
    x, y = exclude_target(x, y, attack.target_class)
    curve = targeted_curve(model, x, y, attack, s_eval=s_eval, name=name,
                           attack_generator=attack_generator, eval_generator=eval_generator)
    rows = []
    for point in curve:
        knobs = setting(step=int(point["step"]), step_size=attack.step_size,
                        target=attack.target_class, S_attack=attack.n_samples, S_eval=s_eval,
                        objective=attack.objective, n=int(point["n"]))
        for key, value in point.items():
            if key in ("step", "n"):
                continue
            measure, metric = (key, "mean_uncertainty") if key in UNCERTAINTIES else ("", key)
            rows.append(Result(name, seed, "targeted", dataset, knobs, measure, metric, value))
    return rows
