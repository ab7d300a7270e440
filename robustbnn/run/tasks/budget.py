"""Task ``budget``: the PGD-EOT attack-budget curve at one eps, grown in posterior samples until
the EOT check passes, worst-of-k evaluation of its largest budget, and the attack-reliability
flags.

Per S_attack and objective (cell param ``objectives``: ``ce``, the mean over samples of the
cross-entropy, and ``dlr``, of the difference-of-logits ratio, :mod:`robustbnn.attacks.margin`)
one PGD-EOT run of ``max(steps)`` steps serves every step count (its checkpoints; a
deterministic model's is run once, at S = 1). Every run starts from the same random points
(stream ``start``), and the objectives' runs at one S_attack draw the same posterior samples
(stream ``attack``), so the curve's points differ only in the budget. At every point each
example keeps the objective's input that is worst for the model under a fresh draw of the
attack's samples (stream ``select``; :func:`robustbnn.attacks.worst_case.worst_case`,
AutoAttack's ensemble): a model whose logits saturate the CE is not credited with the CE's
vanished gradient (docs/pitfalls.md §1.8). Every point is evaluated on the same evaluation
draws (stream ``eval``, common random numbers), so differences between points are the
attack's, not Monte Carlo noise of the evaluation. Rows:

**Adaptive EOT.** After the grid, a stochastic model's cell keeps adding posterior samples
while ``eot_not_converged`` holds: it runs every step count again at the largest S_attack
times the ratio of the grid's last two (16 -> 64 -> 256 for the grid 1, 4, 16), up to the
cell's ``s_cap`` (:func:`grown`). The largest budget is then the converged one, or the cap's,
where the flag stays raised and the robust accuracy is an upper bound. Rows:

* ``pgd_budget`` / ``accuracy`` per (S_attack, steps), knob ``gradient_evaluations`` =
  S_attack x steps x restarts (per objective), knob ``objective`` = the objectives joined by
  ``+`` (``ce+dlr``);
* ``worst_of_k`` / expected and all-k accuracy, flip probability of the largest budget;
* ``robust_flags`` / ``value`` and ``raised`` per flag: ``eot_not_converged`` (the largest
  budget lowers accuracy by more than ``eot_tol`` against the next-largest S_attack at the
  same number of steps, after adaptive EOT: more posterior samples still help at the cap, so
  the attack's expectation has not converged and the robust accuracy is an upper bound),
  ``transfer_beats_eot`` (PGD on one frozen posterior sample, the same objectives and worst
  case, evaluated on the predictive),
  ``low_gradient_snr`` (median SNR of the S_attack-sample gradient below ``snr_min``),
  ``black_box_beats_white_box`` (Square through torchattacks; only when its cell asked for it).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import torch
from torch import Tensor

from robustbnn.attacks.budget import check_budget
from robustbnn.attacks.pgd import PGD
from robustbnn.attacks.reliability import Square, gradient_snr, transfer_attack
from robustbnn.attacks.sanity import FrozenSample
from robustbnn.attacks.worst_case import worst_case
from robustbnn.bench_config import BudgetObjective
from robustbnn.contract.predict import Evaluation
from robustbnn.metrics.worst_of_k import k_predictions, summarise
from robustbnn.results import names as N
from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context
from robustbnn.run.tasks._scoring import in_attack_batches

__all__ = ["PGD_OBJECTIVES", "SNR_CAP", "grown", "largest_and_next", "run"]

SNR_CAP = 1e6  # the stored SNR of gradients without spread (deterministic models: infinite)
# The PGD objective (robustbnn.attacks._grad) of each budget objective: both are means over the
# attack's posterior samples of a per-sample loss (EOT).
PGD_OBJECTIVES = {BudgetObjective.CE: "expected", BudgetObjective.DLR: "dlr"}


def largest_and_next(points: dict[tuple[int, int], float],
                     ) -> tuple[tuple[int, int], tuple[int, int] | None]:
    """The largest budget (most samples, then most steps) and, at its step count, the point
    with the next-largest S_attack (None when the grid has one S_attack)."""
    largest = max(points)
    below = [p for p in points if p[1] == largest[1] and p[0] < largest[0]]
    return largest, (max(below) if below else None)


def _correct(ctx: Context, x_adv: Tensor, y: Tensor) -> np.ndarray:
    """Per example 1.0 when one S_eval evaluation on the cell's common ``eval`` draws
    classifies it correctly, else 0.0, (B,)."""
    evaluation = Evaluation(ctx.cfg.s_eval, ctx.gen("eval"), ctx.params["memory_mb"])
    preds = k_predictions(ctx.model, x_adv, evaluation, k=1)
    return (preds[0] == y).double().cpu().numpy()


def _accuracy(ctx: Context, x_adv: Tensor, y: Tensor) -> float:
    """Accuracy of one S_eval evaluation on the cell's common ``eval`` draws."""
    return float(_correct(ctx, x_adv, y).mean())


def run(ctx: Context) -> CellOutcome:
    """The budget curve, worst-of-k and the reliability flags at the cell's eps."""
    p = ctx.params
    x, y = ctx.test_head(p[N.N])
    base = {N.EPS: p[N.EPS], N.STEP_SIZE: p[N.STEP_SIZE], N.RESTARTS: p[N.RESTARTS],
            N.S_EVAL: ctx.cfg.s_eval, N.N: int(x.shape[0]),
            N.OBJECTIVE: "+".join(BudgetObjective(o).value for o in p["objectives"])}
    rows, points, adv = _curve(ctx, x, y, base)
    largest, nxt = largest_and_next(points)
    top = base | {N.S_ATTACK: largest[0], N.STEPS: largest[1],
                  N.GRADIENT_EVALUATIONS: _evaluations(largest, p[N.RESTARTS])}
    rows += _worst_of_k(ctx, adv[largest], y, top)
    rows += _flags(ctx, x, y, points, largest, nxt)
    return CellOutcome(rows=rows)


def _evaluations(point: tuple[int, int], restarts: int) -> int:
    """The gradient evaluations of a budget point (S_attack, steps): S_attack x steps x
    restarts."""
    return point[0] * point[1] * restarts


def _curve(ctx: Context, x: Tensor, y: Tensor, base: dict
           ) -> tuple[list, dict[tuple[int, int], float], dict[tuple[int, int], Tensor]]:
    """Rows ``pgd_budget`` / ``accuracy`` per (S_attack, steps), with each point's accuracy
    and adversarial inputs (per example the worst case over the cell's objectives): the grid,
    then, for a stochastic model, :func:`grown` S_attack while the EOT check fails."""
    p = ctx.params
    rows: list = []
    points: dict[tuple[int, int], float] = {}
    adv: dict[tuple[int, int], Tensor] = {}
    runs: dict[tuple[int, int], tuple[Tensor, np.ndarray]] = {}
    for s in p["s_grid"]:
        rows += _point(ctx, x, y, base, s, runs, points, adv)
    if p["stochastic"]:
        while (s := grown(points, p["eot_tol"], p.get("s_cap", 0))) is not None:
            rows += _point(ctx, x, y, base, s, runs, points, adv)
    return rows, points, adv


def grown(points: dict[tuple[int, int], float], tol: float, cap: int) -> int | None:
    """The next S_attack of adaptive EOT, or None when the curve has converged or the cap
    stops it.

    While the largest budget lowers accuracy by more than ``tol`` against the next-largest
    S_attack at the same steps (``eot_not_converged``), the next S_attack is the largest one
    times the ratio of the last two (at least 2), if that is at most ``cap``.

    Example:
        >>> grown({(4, 40): 0.30, (16, 40): 0.25}, 0.01, 64)
        64
        >>> grown({(4, 40): 0.30, (16, 40): 0.25, (64, 40): 0.25}, 0.01, 256) is None
        True
        >>> grown({(4, 40): 0.30, (16, 40): 0.25}, 0.01, 32) is None
        True
    """
    largest, nxt = largest_and_next(points)
    if nxt is None or points[nxt] - points[largest] <= tol:
        return None
    s = largest[0] * max(2, largest[0] // nxt[0])
    return s if s <= cap else None


def _point(ctx: Context, x: Tensor, y: Tensor, base: dict, s: int,
           runs: dict[tuple[int, int], tuple[Tensor, np.ndarray]],
           points: dict[tuple[int, int], float], adv: dict[tuple[int, int], Tensor]) -> list:
    """Rows ``pgd_budget`` / ``accuracy`` of S_attack ``s`` at every step count, filling
    ``points`` and ``adv``; ``runs`` keeps each attack run (S, steps) for the S it serves."""
    p = ctx.params
    eps, restarts, at = p[N.EPS], p[N.RESTARTS], tuple(p["steps_grid"])
    # A deterministic model's S samples are one network: its S-sample attack is the
    # 1-sample attack, run once and reported at every S of the grid.
    s_run = s if p["stochastic"] else 1
    if (s_run, at[0]) not in runs:
        found = []  # per objective, {steps: x_adv}
        for objective in (BudgetObjective(o) for o in p["objectives"]):
            attack = PGD(eps=eps, step_size=p[N.STEP_SIZE], steps=max(at),
                         restarts=restarts, n_samples=s_run,
                         objective=PGD_OBJECTIVES[objective], label="true")
            parts = in_attack_batches(ctx, s_run, functools.partial(
                attack.checkpoints, ctx.model, at=at,
                generator=ctx.gen("attack", str(s_run)), start_generator=ctx.gen("start")),
                x, y, attack=f"pgd {objective}")
            found.append({k: torch.cat([part[k] for part in parts]).detach() for k in at})
            for steps in at:
                check_budget(x, found[-1][steps], eps, "linf", attack=f"pgd {objective}")
        for steps in at:
            x_adv = _worst(ctx, [f[steps] for f in found], y, s_run, steps)
            runs[s_run, steps] = x_adv, _correct(ctx, x_adv, y)
    rows = []
    for steps in at:
        key = (s, steps)
        adv[key], correct = runs[s_run, steps]
        points[key] = float(correct.mean())
        knobs = base | {N.S_ATTACK: s, N.STEPS: steps,
                        N.GRADIENT_EVALUATIONS: _evaluations(key, restarts)}
        rows.append(ctx.result(N.PGD_BUDGET, knobs, "", N.ACCURACY, points[key],
                               examples={N.ACCURACY: correct}))
    return rows


def _worst(ctx: Context, candidates: list[Tensor], y: Tensor, s_run: int, steps: int) -> Tensor:
    """Per example the candidate worst for the model under ``s_run`` attack samples from
    stream ``select`` (the only candidate when the cell has one objective)."""
    if len(candidates) == 1:
        return candidates[0]
    select = ctx.gen("select", str(s_run), str(steps))
    parts = in_attack_batches(ctx, s_run, lambda yb, *xb: worst_case(
        ctx.model, xb, yb, n_samples=s_run, generator=select)[0], y, *candidates,
        attack="worst_case", names=("y", *("x_adv",) * len(candidates)))
    return torch.cat(parts)


def _worst_of_k(ctx: Context, x_adv: Tensor, y: Tensor, top: dict) -> list:
    """Rows ``worst_of_k``: expected and all-k accuracy and flip probability of the largest
    budget's adversarial inputs, on the cell's ``worst_of_k`` draws."""
    p = ctx.params
    worst = Evaluation(ctx.cfg.s_eval, ctx.gen("worst_of_k"), p["memory_mb"])
    preds = k_predictions(ctx.model, x_adv, worst, k=p[N.K])
    summary = summarise(preds, y)
    correct = (preds == y).double()  # (k, B)
    parts = {N.EXPECTED_ACCURACY: correct.mean(0).cpu().numpy(),
             N.ALL_K_ACCURACY: correct.min(0).values.cpu().numpy()}
    knobs = top | {N.K: p[N.K]}
    return [ctx.result(N.WORST_OF_K, knobs, "", metric, value,
                       examples=parts if metric in parts else None)
            for metric, value in ((N.EXPECTED_ACCURACY, summary.expected_accuracy),
                                  (N.ALL_K_ACCURACY, summary.all_k_accuracy),
                                  (N.FLIP_PROBABILITY, summary.flip_probability))]


def _flags(ctx: Context, x: Tensor, y: Tensor, points: dict[tuple[int, int], float],
           largest: tuple[int, int], nxt: tuple[int, int] | None) -> list:
    """Rows ``robust_flags``: the value and whether it is raised, per reliability flag.

    ``points`` are the curve's accuracies; ``largest`` and ``nxt`` its points of
    :func:`largest_and_next`.
    """
    p = ctx.params
    eps, restarts, tol = p[N.EPS], p[N.RESTARTS], p["eot_tol"]
    rows = []

    def flag(name: str, value: float, raised: bool, knobs: dict) -> None:
        knobs = {N.EPS: eps, **knobs}
        rows.append(ctx.result(N.ROBUST_FLAGS, knobs, name, N.VALUE, value))
        rows.append(ctx.result(N.ROBUST_FLAGS, knobs, name, N.RAISED, float(raised)))

    eot_acc = points[largest]
    if nxt is not None:
        gap = points[nxt] - eot_acc
        # Raised here only when adaptive EOT stopped at its cap (or has none): the number is
        # then an upper bound.
        flag("eot_not_converged", gap, gap > tol,
             {N.TOL: tol, N.S_ATTACK: nxt[0], "s_cap": p.get("s_cap", 0)})
    steps = max(p["steps_grid"])
    member = ctx.gen("member")
    found = []
    for objective in (BudgetObjective(o) for o in p["objectives"]):
        frozen = PGD(eps=eps, step_size=p[N.STEP_SIZE], steps=steps, restarts=restarts,
                     n_samples=1, objective=PGD_OBJECTIVES[objective], label="true")
        # The frozen sample draws no posterior samples from a generator: the start stream is
        # the only one the transfer attack draws from (the EOT runs' starts).
        found.append(torch.cat(in_attack_batches(ctx, 1, functools.partial(
            transfer_attack, ctx.model, attack=frozen, member=member,
            generator=ctx.gen("start")), x, y, attack="transfer_attack")))
    # Per example the worst case on the frozen member itself, as the EOT runs' on their
    # samples: a deterministic model's transfer attack stays its EOT attack.
    x_tr = found[0] if len(found) == 1 else torch.cat(in_attack_batches(
        ctx, 1, lambda yb, *xb: worst_case(FrozenSample(ctx.model, member), xb, yb,
                                           n_samples=1)[0], y, *found,
        attack="worst_case", names=("y", *("x_adv",) * len(found))))
    transfer_acc = _accuracy(ctx, x_tr.detach(), y)
    flag("transfer_beats_eot", eot_acc - transfer_acc, transfer_acc < eot_acc - tol,
         {N.TOL: tol, N.STEPS: steps})
    s_max = largest[0]
    if s_max >= 2:
        snr = torch.cat(in_attack_batches(ctx, 1, functools.partial(
            gradient_snr, ctx.model, n_samples=s_max, generator=ctx.gen("snr")), x, y,
            attack="gradient_snr"))
        median = float(snr.median()) * math.sqrt(s_max)
        flag("low_gradient_snr", min(median, SNR_CAP), median < p["snr_min"],
             {N.TOL: p["snr_min"], N.S_ATTACK: s_max})
    if p["square_queries"] > 0:
        s_sq = p["square_s_attack"]
        square = Square(eps=eps, n_queries=p["square_queries"], n_samples=s_sq, seed=0)
        x_sq = torch.cat(in_attack_batches(ctx, s_sq, functools.partial(
            square, ctx.model, generator=ctx.gen("square")), x, y, attack="square"))
        square_acc = _accuracy(ctx, x_sq, y)
        flag("black_box_beats_white_box", eot_acc - square_acc, square_acc < eot_acc - tol,
             {N.TOL: tol, "queries": p["square_queries"], N.S_ATTACK: s_sq})
    return rows
