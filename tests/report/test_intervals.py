"""Intervals and paired comparisons (robustbnn.report.intervals, .ranking, .column_samples):
values against brute-force references, coverage by simulation, ties and planted differences,
and measures chosen out of sample."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.metrics import roc_auc_score

from robustbnn.metrics.classification import ece
from robustbnn.report.column import best_measure, per_run
from robustbnn.report.column_samples import component, halves
from robustbnn.report.intervals import (
    Component,
    compare,
    counts,
    holm,
    interval,
    point,
    seed_interval,
    split_half,
    spread,
)
from robustbnn.report.ranking import column_intervals, rank_models


def _acc(correct: np.ndarray) -> Component:
    return Component("accuracy", {"accuracy": np.asarray(correct, dtype=np.float64)})


def _rank(scores: np.ndarray, labels: np.ndarray) -> Component:
    return Component("auroc", {"score": scores, "label": labels})


def test_resampled_auroc_equals_the_auroc_of_the_materialised_resample() -> None:
    rng = np.random.default_rng(0)
    labels = np.r_[np.zeros(30), np.ones(20)]
    scores = np.round(rng.normal(labels, 1.0), 1)  # rounded: ties across classes
    comp = _rank(scores, labels)
    (_, neg), (_, pos) = comp.strata()
    draw_neg, draw_pos = rng.integers(0, 30, (5, 30)), rng.integers(0, 20, (5, 20))
    got = comp.values([counts(draw_neg, 30), counts(draw_pos, 20)])
    for b in range(5):
        s = np.r_[scores[neg][draw_neg[b]], scores[pos][draw_pos[b]]]
        y = np.r_[np.zeros(30), np.ones(20)]
        assert got[b] == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert point(comp) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)


@pytest.mark.parametrize("metric", ["aupr_in", "aupr_out", "fpr_at_95_tpr"])
def test_resampled_curve_metrics_equal_the_metric_of_the_materialised_resample(
        metric: str) -> None:
    from robustbnn.metrics import ranking

    rng = np.random.default_rng(10)
    labels = np.r_[np.zeros(40), np.ones(25)]
    scores = np.round(rng.normal(labels, 1.0), 1)  # ties within and across classes
    comp = _rank(scores, labels)
    comp = Component(metric, comp.parts)
    (_, neg), (_, pos) = comp.strata()
    draw_neg, draw_pos = rng.integers(0, 40, (6, 40)), rng.integers(0, 25, (6, 25))
    got = comp.values([counts(draw_neg, 40), counts(draw_pos, 25)])
    fn = getattr(ranking, metric)
    for b in range(6):
        s = np.r_[scores[neg][draw_neg[b]], scores[pos][draw_pos[b]]]
        assert got[b] == pytest.approx(fn(np.r_[np.zeros(40), np.ones(25)], s), abs=1e-12)


def test_resampled_ece_equals_the_metric_of_the_materialised_resample() -> None:
    rng = np.random.default_rng(1)
    p = rng.dirichlet(np.ones(4), size=60)
    y = rng.integers(0, 4, 60)
    conf, pred = p.max(1), p.argmax(1)
    comp = Component("ece", {"confidence": conf, "accuracy": (pred == y).astype(float)})
    draws = rng.integers(0, 60, (4, 60))
    got = comp.values([counts(draws, 60)])
    for b in range(4):
        want = ece(torch.tensor(p[draws[b]]), torch.tensor(y[draws[b]]))
        assert got[b] == pytest.approx(float(want), abs=1e-12)


@pytest.mark.parametrize("runs", [1, 3])
def test_the_interval_is_its_two_parts_each_against_its_reference(runs: int) -> None:
    # The examples' part: the standard error of scipy.stats.bootstrap over the examples (the
    # runs fixed, every run on the same draw), to Monte Carlo error (2,000 resamples each);
    # the seeds' part: the standard error of the runs' values; the interval: their half
    # widths at the normal and t_(runs-1) quantiles, added in quadrature.
    from scipy import stats
    from scipy.stats import bootstrap

    rng = np.random.default_rng(11)
    values = [(rng.random(200) < p).astype(float) for p in (0.3, 0.4, 0.35)[:runs]]
    sample = [[_acc(v)] for v in values]
    table = np.stack(values)  # (runs, examples)
    res = bootstrap((np.arange(200),), lambda ex, axis=-1: table[:, ex].mean(-1).mean(0),
                    vectorized=True, n_resamples=2000, method="percentile",
                    random_state=np.random.default_rng(12))
    found = spread(sample)
    assert found.se_examples == pytest.approx(res.standard_error, rel=0.06)
    per_run = table.mean(-1)
    assert found.estimate == pytest.approx(per_run.mean())
    assert found.se_seeds == pytest.approx(stats.sem(per_run) if runs > 1 else 0.0)
    half = np.hypot(1.959964 * found.se_examples,
                    (stats.t.ppf(0.975, runs - 1) if runs > 1 else 0) * found.se_seeds)
    lo, hi = interval(sample, metric="accuracy")
    p, z2 = per_run.mean(), 1.959964 ** 2  # at least the Wilson interval of a 0/1 metric
    centre, width = (p + z2 / 400) / (1 + z2 / 200), np.sqrt(
        z2 * p * (1 - p) / 200 + z2 ** 2 / (4 * 200 ** 2)) / (1 + z2 / 200)
    assert (lo, hi) == pytest.approx((min(p - half, centre - width),
                                      max(p + half, centre + width)), abs=1e-6)
    assert 0 < found.seed_share < 1 if runs > 1 else np.isnan(found.seed_share)


def test_zero_of_n_has_the_wilson_interval_and_ece_lies_inside_its_own() -> None:
    # 0 of 100 in every run: [0, z²/(n + z²)], not a width of zero.
    lo, hi = interval([[_acc(np.zeros(100))]] * 3, metric="accuracy")
    assert lo == 0.0 and hi == pytest.approx(1.959964 ** 2 / (100 + 1.959964 ** 2), rel=1e-5)
    lo, hi = interval([[_acc(np.ones(100))]], metric="accuracy")
    assert hi == 1.0 and lo == pytest.approx(100 / (100 + 1.959964 ** 2), rel=1e-5)
    # a well-calibrated model: a small ECE, biased upward under resampling; the estimate is
    # the interval's centre, so it lies inside (the percentile interval sat above it)
    rng = np.random.default_rng(5)
    conf = rng.uniform(0.5, 1.0, 1000)
    parts = {"confidence": conf, "accuracy": (rng.random(1000) < conf).astype(float)}
    comp = Component("ece", parts)
    lo, hi = interval([[comp]], metric="ece")
    assert 0.0 <= lo < point(comp) < hi


def test_the_interval_covers_the_true_accuracy_95_percent_of_the_time() -> None:
    # 2,000 simulated test sets of 100 Bernoulli(0.35) points (the default robust column's
    # size and level): the 95% interval must cover 0.35 between 93% and 97% of the time.
    rng = np.random.default_rng(2)
    covered = 0
    for _ in range(2000):
        lo, hi = interval([[_acc(rng.random(100) < 0.35)]])
        covered += lo <= 0.35 <= hi
    assert 0.93 <= covered / 2000 <= 0.97


def test_the_interval_covers_the_true_auroc_95_percent_of_the_time() -> None:
    # Scores N(0, 1) in-distribution and N(1, 1) OOD: the true AUROC is Φ(1 / √2).
    from scipy.stats import norm

    true = norm.cdf(1 / np.sqrt(2))
    rng = np.random.default_rng(3)
    labels = np.r_[np.zeros(150), np.ones(100)]
    covered = 0
    for _ in range(600):
        lo, hi = interval([[_rank(rng.normal(labels, 1.0), labels)]])
        covered += lo <= true <= hi
    assert 0.92 <= covered / 600 <= 0.975


def test_two_copies_of_one_model_are_never_separated() -> None:
    rng = np.random.default_rng(4)
    for _ in range(20):
        runs = [[_acc(rng.random(100) < 0.4)] for _ in range(3)]
        result = compare(runs, runs)
        assert result.p_value == 1.0 and result.difference == 0.0
        assert result.p_better == 0.5  # ties count one half


def test_a_planted_difference_of_ten_points_on_1000_paired_points_is_separated() -> None:
    rng = np.random.default_rng(5)
    rank = rng.permutation(1000)  # 600 correct against 500: exactly 100 points apart
    better, worse = _acc(rank < 600), _acc(rank < 500)
    result = compare([[better]], [[worse]])
    assert result.difference == pytest.approx(0.10)
    assert result.p_value < 0.001 and result.low > 0.05 and result.p_better > 0.99
    # Unpaired noise of the same size: each model its own draw of the test points.
    noisy = compare([[_acc(rng.random(1000) < 0.5)]], [[_acc(rng.random(1000) < 0.5)]])
    assert noisy.p_value > 0.01


def _column(correct: dict[str, list[np.ndarray]]) -> pd.Series:
    """A column of per-example accuracies: per model, per run, the 0/1 vector."""
    rows = [{"model": m, "run": r, "seed": r, "task": "t", "dataset": "d", "setting": {},
             "measure": "", "metric": "accuracy", "value": float(np.mean(c)),
             "examples": {"accuracy": np.asarray(c, dtype=np.float64)}}
            for m, runs in correct.items() for r, c in enumerate(runs)]
    return per_run(pd.DataFrame(rows))


def test_the_groups_hold_identical_models_together_and_part_a_planted_difference() -> None:
    rng = np.random.default_rng(6)
    base = [rng.random(1000) for _ in range(2)]
    column = _column({"best": [b < 0.6 for b in base], "copy": [b < 0.6 for b in base],
                      "worse": [b < 0.5 for b in base]})
    ranked = rank_models(["best", "copy", "worse"], column, higher=True)
    assert ranked.groups == (("best", "copy"), ("worse",))
    pairs = ranked.best.pairs
    assert not pairs[("best", "copy")].separated and pairs[("best", "worse")].separated
    assert ranked.best.beats() == [("best", "worse"), ("copy", "worse")]
    assert ranked.min_detectable > 0
    bounds, size, shares = column_intervals(column, "accuracy")
    assert set(shares) == {"best", "copy", "worse"}
    assert size == "n = 1000 test points, 2 runs"
    assert bounds["best"] == bounds["copy"] and bounds["best"][0] < 0.6 < bounds["best"][1]


def test_holm_matches_its_definition_by_brute_force() -> None:
    rng = np.random.default_rng(7)
    p = {f"m{i}": float(v) for i, v in enumerate(rng.random(6) / 10)}
    adjusted = holm(p)
    order = sorted(p, key=p.get)
    for i, key in enumerate(order):
        want = min(1.0, max((len(p) - j) * p[order[j]] for j in range(i + 1)))
        assert adjusted[key] == pytest.approx(want)


def test_a_t_interval_over_seeds_and_none_for_one_run() -> None:
    lo, hi = seed_interval([0.9, 0.8])
    assert (lo, hi) == pytest.approx((0.85 - 12.7062047 * 0.05, 0.85 + 12.7062047 * 0.05))
    assert np.isnan(seed_interval([0.9])).all()


def test_one_split_per_test_point_the_same_in_every_run_and_copies_together() -> None:
    # The split is the test point's, not the run's: rows of seeds 0 and 7 split alike.
    labels = np.r_[np.zeros(50), np.ones(50)]
    rows = [(seed, {"score": np.arange(100.0), "label": labels}) for seed in (0, 7)]
    splits = [component(pd.Series({"metric": "auroc", "seed": s, "examples": p}), "select")
              for s, p in rows]
    assert (splits[0].keep == splits[1].keep).all()
    # Adversary detection: the k-th clean point and its adversarial copy (k + n) share a half
    # and a resampling stratum.
    parts = {"adversary_detection_score": np.arange(200.0),
             "adversary_detection_label": labels.repeat(2)}
    got = halves("adversary_detection", parts)
    for half in got.values():
        clean = half[half < 100]
        assert (np.sort(clean + 100) == half[half >= 100]).all()
    keys = [k for k, _ in Component("adversary_detection", parts).strata()]
    assert keys[0] == keys[1]  # one draw for both copies


def test_the_split_is_fixed_by_seed_disjoint_and_the_same_for_every_model() -> None:
    sel, score = split_half(101, 3, "all")
    assert len(sel) == 50 and len(score) == 51 and not set(sel) & set(score)
    assert (split_half(101, 3, "all")[0] == sel).all()
    assert not (split_half(101, 4, "all")[0] == sel).all()
    parts = {"score": np.arange(10.0), "label": np.r_[np.zeros(6), np.ones(4)]}
    got = halves("auroc", parts, 0)
    assert sorted([*got["select"], *got["score"]]) == list(range(10))
    for half in got.values():  # both classes in each half
        assert set(parts["label"][half]) == {0.0, 1.0}


def _ood_rows(seed: int, measures: dict[str, np.ndarray], labels: np.ndarray) -> list[dict]:
    return [{"model": "m", "run": seed, "seed": seed, "task": "ood", "dataset": "u",
             "setting": {}, "measure": name, "metric": "auroc",
             "value": roc_auc_score(labels, s) if np.ptp(s) else 0.5,
             "examples": {"score": s, "label": labels}} for name, s in measures.items()]


def test_a_measure_best_on_the_selection_half_is_scored_on_the_other_half() -> None:
    # "cheat" ranks the selection half perfectly and the scoring half backwards; "honest" is
    # moderately good on both. The choice may fall on cheat, but its number must be the
    # scoring half's (low), never the in-sample one.
    rng = np.random.default_rng(8)
    labels = np.r_[np.zeros(200), np.ones(200)]
    split = halves("auroc", {"score": np.zeros(400), "label": labels}, 0)
    cheat = np.where(labels == 1, 1.0, 0.0)
    cheat[split["score"]] = 1.0 - cheat[split["score"]]  # backwards where it is scored
    honest = rng.normal(labels * 1.5, 1.0)
    rows = pd.DataFrame(_ood_rows(0, {"cheat": cheat, "honest": honest}, labels))
    value, best = best_measure(rows, "auroc")
    assert best["m"] == "cheat"  # the best on the selection half, by construction
    scored = roc_auc_score(labels[split["score"]], cheat[split["score"]])
    assert value[("m", 0)] == pytest.approx(scored) == pytest.approx(0.0)
    assert value.attrs["column"].half == "score"
    # Where it is scored, the selection half plays no part: changing it moves nothing.
    moved = cheat.copy()
    moved[split["select"]] = 0.5
    rows2 = pd.DataFrame(_ood_rows(0, {"cheat": moved, "honest": honest}, labels))
    rows2.loc[rows2["measure"] == "cheat", "examples"] = [{"score": moved, "label": labels}]
    value2, best2 = best_measure(rows2, "auroc")
    assert best2["m"] == "honest"


def test_a_constant_measure_is_never_chosen() -> None:
    # bald of a deterministic model: 0 everywhere, AUROC 1/2 by ties alone; every informative
    # measure below 1/2 (the fidelity task of issue 40), so in-sample bald would win.
    rng = np.random.default_rng(9)
    labels = np.r_[np.zeros(100), np.ones(100)]
    bad = rng.normal(-0.3 * labels, 1.0)  # AUROC below 1/2
    rows = pd.DataFrame(_ood_rows(0, {"bald": np.zeros(200), "entropy": bad}, labels))
    _, best = best_measure(rows, "auroc")
    assert best["m"] == "entropy"
