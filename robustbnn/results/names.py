"""The names that results carry and reports depend on: tasks, metrics and setting knobs.

A result row is ``(model, seed, task, dataset, setting, measure, metric, value)``; the bench
writes these names and the reports select by them, so both import them from here rather than
spelling string literals. Renaming one is an interface change: the reports raise
(:func:`robustbnn.results.schema.with_knobs`) instead of silently dropping a column.
"""

from __future__ import annotations

import enum

__all__ = [
    "ACCURACY", "ADAPTIVE", "ADV_OOD", "ALL_K_ACCURACY", "DETECTION_AWARE_ACCURACY",
    "DETECTOR_AWARE", "EXPECTED_ACCURACY", "FLIP_PROBABILITY", "FPR", "GRADIENT_EVALUATIONS",
    "IN_TASK", "K", "NONFINITE_LOGITS", "NUMERICAL_FAULT", "PGD_BUDGET", "RAISED",
    "ROBUSTNESS_TASKS", "ROBUST_FLAGS", "TOL",
    "WORST_OF_K",
    "ADVERSARY_DETECTION", "ANGLE", "AUPR_IN", "BIN", "BRIER", "CONFIDENCE", "CORRUPTION",
    "COUNT", "N_BINS", "RELIABILITY", "SHIFT", "SHIFTS", "ShiftKind", "AUPR_OUT", "AUROC",
    "CLEAN", "CLIP", "COST",
    "ECE", "EPS", "ERROR_DETECTION", "FGSM", "FGSM_SANITY", "FPR_AT_95_TPR", "GRADIENT_NONZERO",
    "HELDOUT_CLEAN", "KNOBS", "L2", "LABEL", "LINF", "MEAN_UNCERTAINTY", "METRICS", "N", "NLL",
    "NORMS", "N_IN", "N_OUT", "OBJECTIVE", "OOD", "PARAMETERS", "PASSED", "PGD", "RESTARTS",
    "S_ATTACK", "SECONDS", "SECONDS_PER_1000_PREDICTIONS", "STEP", "STEPS", "STEP_SIZE", "S_EVAL",
    "TARGET", "TARGETED", "TARGET_SUCCESS", "TASKS", "VALUE",
    "FIDELITY", "AGREEMENT", "TOTAL_VARIATION", "KL_FROM_REFERENCE", "REFERENCE",
]

# Tasks (the ``task`` field).
CLEAN = "clean"
COST = "cost"
FGSM = "fgsm"
FGSM_SANITY = "fgsm_sanity"
TARGETED = "targeted"
PGD = "pgd"
OOD = "ood"
HELDOUT_CLEAN = "heldout_clean"
# The robustness leaderboard for stochastic models (docs/concepts.md, "Honest robustness numbers").
PGD_BUDGET = "pgd_budget"  # PGD-EOT accuracy over (S_attack, steps): the attack-budget curve
WORST_OF_K = "worst_of_k"  # the largest budget's inputs evaluated k times
DETECTOR_AWARE = "detector_aware"  # correct-or-flagged under non-adaptive and adaptive PGD
ADV_OOD = "adv_ood"  # OOD inputs perturbed to lower each uncertainty measure
ROBUST_FLAGS = "robust_flags"  # attack-reliability flags (measure = the flag's name)
ROBUSTNESS_TASKS = (PGD_BUDGET, WORST_OF_K, DETECTOR_AWARE, ADV_OOD, ROBUST_FLAGS)
# Calibration under dataset shift (docs/concepts.md, "Calibration under dataset shift").
SHIFT = "shift"  # accuracy, NLL, ECE, Brier, mean uncertainty on a shifted test set
RELIABILITY = "reliability"  # reliability-diagram bins (clean, and pooled over MNIST-C)
# A cell whose model returned NaN or inf logits writes one row of this task in place of its
# rows (robustbnn.run.tasks._faults); its knob IN_TASK names the cell's task.
NUMERICAL_FAULT = "numerical_fault"
IN_TASK = "in_task"
# Posterior fidelity (docs/fidelity.md): the MC predictive against a reference posterior's.
FIDELITY = "fidelity"
TASKS = (CLEAN, COST, FGSM, FGSM_SANITY, TARGETED, PGD, OOD, HELDOUT_CLEAN, *ROBUSTNESS_TASKS,
         SHIFT, RELIABILITY, FIDELITY)


class ShiftKind(enum.StrEnum):
    """The kinds of shift (the ``shift`` knob): none (the clean test set), rotated, corrupted."""

    NONE = "none"
    ROTATED = "rotated"  # Ovadia et al. 2019, Fig. 1: 0-180 degrees in 15-degree steps
    CORRUPTED = "corrupted"  # MNIST-C, Mu & Gilmer 2019: fifteen corruptions


SHIFTS = (ShiftKind.ROTATED, ShiftKind.CORRUPTED)  # the kinds a run may shift its test set by

# Metrics (the ``metric`` field).
ACCURACY = "accuracy"
NLL = "nll"
ECE = "ece"
BRIER = "brier"  # multiclass Brier score, sum over classes (robustbnn.metrics.calibration)
CONFIDENCE = "confidence"  # a reliability bin's mean confidence
COUNT = "count"  # examples in a reliability bin
AUROC = "auroc"
AUPR_IN = "aupr_in"
AUPR_OUT = "aupr_out"
FPR_AT_95_TPR = "fpr_at_95_tpr"
MEAN_UNCERTAINTY = "mean_uncertainty"
ADVERSARY_DETECTION = "adversary_detection"
ERROR_DETECTION = "error_detection"
TARGET_SUCCESS = "target_success"
LINF = "linf"
L2 = "l2"
NORMS = {LINF: "L∞", L2: "L2"}
"""The norms an attack may declare (the ``norm`` knob), with their names for people."""
VALUE = "value"
PASSED = "passed"
SECONDS_PER_1000_PREDICTIONS = "seconds_per_1000_predictions"
PARAMETERS = "parameters"
SECONDS = "seconds"
EXPECTED_ACCURACY = "expected_accuracy"
ALL_K_ACCURACY = "all_k_accuracy"
FLIP_PROBABILITY = "flip_probability"
DETECTION_AWARE_ACCURACY = "detection_aware_accuracy"
RAISED = "raised"  # a reliability flag: 1 raised, 0 silent
AGREEMENT = "agreement"  # top-1 match with the reference predictive (robustbnn.metrics.fidelity)
TOTAL_VARIATION = "total_variation"  # mean ½ Σ_c |p̄_c − q_c|
KL_FROM_REFERENCE = "kl_from_reference"  # mean KL(q ‖ p̄), nats
NONFINITE_LOGITS = "nonfinite_logits"  # a numerical_fault row: NaN/inf logits (run.tasks._faults)
# The probability that a model's number beats the best model's in one run on a fresh test set
# (Bouthillier et al. 2021): a report's column (robustbnn.report.ranking), never a result row.
P_BETTER = "p_better"
METRICS = (EXPECTED_ACCURACY, ALL_K_ACCURACY, FLIP_PROBABILITY, DETECTION_AWARE_ACCURACY,
           RAISED, ACCURACY, NLL, ECE, BRIER, CONFIDENCE, COUNT, AUROC, AUPR_IN, AUPR_OUT,
           FPR_AT_95_TPR, MEAN_UNCERTAINTY,
           ADVERSARY_DETECTION, ERROR_DETECTION, TARGET_SUCCESS, LINF, L2, VALUE, PASSED,
           SECONDS_PER_1000_PREDICTIONS, PARAMETERS, SECONDS, AGREEMENT, TOTAL_VARIATION,
           KL_FROM_REFERENCE, NONFINITE_LOGITS)
"""Every metric a result row may carry: the results reader refuses any other
(:mod:`robustbnn.results.catalogue`), so a new metric is added here."""

# The Carlini-style sanity check of FGSM (a ``measure`` of task ``fgsm_sanity``).
GRADIENT_NONZERO = "gradient_nonzero"

# Knobs (the keys of ``setting``).
EPS = "eps"
S_ATTACK = "S_attack"
REFERENCE = "reference"  # the fidelity reference model's name
S_EVAL = "S_eval"
OBJECTIVE = "objective"
LABEL = "label"
CLIP = "clip"
STEP = "step"
STEP_SIZE = "step_size"
TARGET = "target"
N = "n"
N_IN = "n_in"
N_OUT = "n_out"
STEPS = "steps"
RESTARTS = "restarts"
GRADIENT_EVALUATIONS = "gradient_evaluations"  # S_attack x steps x restarts
K = "k"  # evaluations per input (worst-of-k)
ADAPTIVE = "adaptive"  # the attack knows the detector
FPR = "fpr"  # the detector's false-positive rate on clean test data
TOL = "tol"  # a flag's threshold
ANGLE = "angle"  # rotation in degrees, counter-clockwise
CORRUPTION = "corruption"  # an MNIST-C corruption's name
BIN = "bin"  # reliability bin index, 0 = lowest confidence
N_BINS = "n_bins"  # equal-width confidence bins over [0, 1]
KNOBS = (SHIFT, ANGLE, CORRUPTION, BIN, N_BINS, GRADIENT_EVALUATIONS, K, ADAPTIVE, FPR, TOL,
         EPS, S_ATTACK, S_EVAL, OBJECTIVE, LABEL,
         CLIP, STEP, STEP_SIZE, TARGET, N, N_IN, N_OUT,
         STEPS, RESTARTS, REFERENCE)
