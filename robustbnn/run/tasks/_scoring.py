"""Scoring shared by the evaluation tasks: uncertainty scores, OOD ranking rows, attack rows."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from robustbnn.attacks import ATTACKS
from robustbnn.attacks.copies import INPUT_NAMES, call_on_copies
from robustbnn.contract.predict import chunk_rows, sample_probs
from robustbnn.metrics import aupr_in, aupr_out, auroc, fpr_at_95_tpr
from robustbnn.metrics.calibration import brier, brier_per_example, reliability
from robustbnn.metrics.classification import accuracy, ece, nll, nll_per_example
from robustbnn.ood import all_measures, builtin_measures
from robustbnn.ood.extra import EXTRA_MEASURES
from robustbnn.results import names as N
from robustbnn.run.context import Context

__all__ = ["CALIBRATION", "RANKING", "adversarial_rows", "calibration_rows", "in_attack_batches",
           "no_grad_probs", "no_grad_samples", "ranking_rows", "reliability_rows",
           "uncertainty_scores"]

RANKING = {N.AUROC: auroc, N.AUPR_IN: aupr_in, N.AUPR_OUT: aupr_out,
           N.FPR_AT_95_TPR: fpr_at_95_tpr}

# Metrics of the predictive mean (B, C) against labels (B,): every clean and shifted test set.
CALIBRATION = {N.ACCURACY: accuracy, N.NLL: nll, N.ECE: ece, N.BRIER: brier}
RELIABILITY_BINS = 15  # the bins of ece(), so a diagram's gaps add up to the ECE column


def calibration_rows(ctx: Context, task: str, knobs: dict, mean: Tensor, y: Tensor) -> list[dict]:
    """Accuracy, NLL, ECE and Brier score of the predictive ``mean`` (B, C) on labels ``y``,
    each with its examples (:func:`calibration_examples`)."""
    parts = calibration_examples(mean, y)
    return [ctx.result(task, knobs, "", metric, fn(mean, y), examples=parts[metric])
            for metric, fn in CALIBRATION.items()]


def calibration_examples(mean: Tensor, y: Tensor) -> dict[str, dict[str, np.ndarray]]:
    """Per calibration metric, the per-example parts it is computed from
    (:mod:`robustbnn.results.examples`): the 0/1 correctness, each example's NLL and Brier
    score, and for the ECE the confidences beside the correctness."""
    confidence, predicted = mean.max(dim=-1)
    correct = (predicted == y).double().cpu().numpy()
    return {N.ACCURACY: {N.ACCURACY: correct},
            N.NLL: {N.NLL: nll_per_example(mean, y).double().cpu().numpy()},
            N.ECE: {"confidence": confidence.double().cpu().numpy(), N.ACCURACY: correct},
            N.BRIER: {N.BRIER: brier_per_example(mean, y).double().cpu().numpy()}}


def reliability_rows(ctx: Context, knobs: dict, mean: Tensor, y: Tensor) -> list[dict]:
    """The reliability diagram of ``mean`` (B, C) on ``y`` as rows of task ``reliability``:
    per bin its count, and for a non-empty bin its mean confidence and accuracy."""
    bins = reliability(mean, y, n_bins=RELIABILITY_BINS)
    rows = []
    for b, count in enumerate(bins.counts.tolist()):
        at = {**knobs, N.BIN: b, N.N_BINS: RELIABILITY_BINS}
        rows.append(ctx.result(N.RELIABILITY, at, "", N.COUNT, count))
        if count:
            rows.append(ctx.result(N.RELIABILITY, at, "", N.CONFIDENCE, bins.confidence[b]))
            rows.append(ctx.result(N.RELIABILITY, at, "", N.ACCURACY, bins.accuracy[b]))
    return rows


def uncertainty_scores(probs: Tensor, extra: tuple[str, ...] = (), *,
                       logits: Tensor | None = None) -> dict[str, np.ndarray]:
    """The built-in uncertainty measures of probs (S, B, C) (those reading logits only when
    ``logits`` (S, B, C) are given), then the ``extra`` ones
    (:data:`robustbnn.ood.extra.EXTRA_MEASURES`), as float64 arrays (B,).

    Plug-in measures are not here: a cell's id does not name the measures it computes, so
    they get cells of their own (task ``measure``)."""
    scores = all_measures(probs, logits, names=builtin_measures(logits=logits is not None))
    scores |= {m: EXTRA_MEASURES.get(m)(probs) for m in extra}
    return {m: u.double().cpu().numpy() for m, u in scores.items()}


def ranking_rows(ctx: Context, scores_in: dict[str, np.ndarray],
                 scores_out: dict[str, np.ndarray], *, dataset: str) -> list[dict]:
    """OOD detection rows (OOD = positive class), every measure x ranking metric, and each
    measure's mean over the OOD set (``mean_uncertainty``)."""
    n_in, n_out = len(next(iter(scores_in.values()))), len(next(iter(scores_out.values())))
    knobs = {N.S_EVAL: ctx.cfg.s_eval, N.N_IN: n_in, N.N_OUT: n_out}
    rows = []
    for measure, s_in in scores_in.items():
        labels = np.r_[np.zeros(len(s_in)), np.ones(len(scores_out[measure]))]
        scores = np.r_[s_in, scores_out[measure]]
        for metric, fn in RANKING.items():
            rows.append(ctx.result(N.OOD, knobs, measure, metric, fn(labels, scores),
                                   dataset=dataset,
                                   examples={"score": scores, "label": labels}))
        rows.append(ctx.result(N.OOD, knobs, measure, N.MEAN_UNCERTAINTY,
                               float(scores_out[measure].mean()), dataset=dataset))
    return rows


def adversarial_rows(ctx: Context, task: str, knobs: dict, x_adv: Tensor, y: Tensor, *,
                     clean_scores: dict[str, np.ndarray] | None) -> list[dict]:
    """Accuracy, mean uncertainty and detection AUROCs of adversarial inputs ``x_adv``.

    Evaluated with ``S_eval`` fresh samples from the cell's ``eval`` stream. Per measure,
    ``adversary_detection`` is the AUROC of the clean points (0) against their adversarial
    versions (1), and ``error_detection`` that of misclassified (1) against correct (0)
    adversarial points (omitted when all are one kind).
    """
    probs = sample_probs(ctx.model, x_adv, ctx.cfg.s_eval, generator=ctx.gen("eval", str(knobs)),
                         memory_mb=ctx.params["memory_mb"])
    wrong = (probs.mean(0).argmax(-1) != y).double().cpu().numpy()
    rows = [ctx.result(task, knobs, "", N.ACCURACY, 1 - wrong.mean(),
                       examples={N.ACCURACY: 1 - wrong})]
    for measure, score in uncertainty_scores(probs).items():
        rows.append(ctx.result(task, knobs, measure, N.MEAN_UNCERTAINTY, float(score.mean())))
        if clean_scores is not None:
            labels = np.r_[np.zeros(len(score)), np.ones(len(score))]
            both = np.r_[clean_scores[measure][:len(score)], score]
            rows.append(ctx.result(task, knobs, measure, N.ADVERSARY_DETECTION,
                                   auroc(labels, both), examples={
                                       f"{N.ADVERSARY_DETECTION}_score": both,
                                       f"{N.ADVERSARY_DETECTION}_label": labels}))
        if 0 < wrong.sum() < len(wrong):
            rows.append(ctx.result(task, knobs, measure, N.ERROR_DETECTION,
                                   auroc(wrong, score), examples={
                                       f"{N.ERROR_DETECTION}_score": score,
                                       f"{N.ERROR_DETECTION}_label": wrong}))
    return rows


def in_attack_batches(ctx: Context, n_samples: int, fn: Callable[..., Any], *tensors: Tensor,
                      attack: str, names: Sequence[str] = INPUT_NAMES,
                      check: Callable[..., None] | None = None) -> list[Any]:
    """``fn`` on consecutive example slices of ``tensors``, each slice small enough that one
    gradient pass of ``n_samples`` posterior samples fits the cell's ``memory_mb``.

    ``fn`` gets copies of each slice, never the run's data, and is refused by name
    (:func:`robustbnn.attacks.copies.call_on_copies`, an ``AttackContractError``) when it
    changed one in place; ``check``, when given, is called with the untouched slices and what
    ``fn`` returned (the budget check, against the pristine inputs)."""
    rows = chunk_rows(ctx.model, ctx.params["memory_mb"], grad=True)
    batch = max(1, rows // n_samples)
    command = "" if attack not in ATTACKS.names() else shlex.join(
        ["robustbnn", "check", *(w for p in ctx.spec.plugins for w in ("--plugin", p)),
         "--attack", attack])
    out = []
    for i in range(0, tensors[0].shape[0], batch):
        pristine = tuple(t[i : i + batch] for t in tensors)
        out.append(call_on_copies(fn, *pristine, attack=attack, names=names, check=command))
        if check is not None:
            check(*pristine, out[-1])
    return out


def no_grad_probs(ctx: Context, x: Tensor, *keys: str) -> Tensor:
    """S_eval fresh posterior probabilities (S, B, C) of ``x`` from stream ``keys``."""
    with torch.no_grad():
        return sample_probs(ctx.model, x, ctx.cfg.s_eval, generator=ctx.gen(*keys),
                            memory_mb=ctx.params["memory_mb"])


def no_grad_samples(ctx: Context, x: Tensor, *keys: str) -> tuple[Tensor, Tensor]:
    """:func:`no_grad_probs` and the logits they came from, both (S, B, C): the same draws
    from the same stream, so the probabilities are those :func:`no_grad_probs` returns."""
    with torch.no_grad():
        return sample_probs(ctx.model, x, ctx.cfg.s_eval, generator=ctx.gen(*keys),
                            memory_mb=ctx.params["memory_mb"], logits=True)
