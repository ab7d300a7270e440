"""Tests for the logit measures (robustbnn.ood.energy) and the Measure record."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from robustbnn.ood import BUILTIN_MEASURES, UNCERTAINTIES, Measure, all_measures, measure
from robustbnn.ood.energy import energy, max_logit, mean_energy, mean_max_logit

LOGIT_MEASURES = ["energy", "mean_energy", "max_logit", "mean_max_logit"]


def _logits(seed: int, shape: tuple[int, int, int] = (3, 5, 7)) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return 4 * torch.randn(shape, generator=g, dtype=torch.float64)


def _reference(name: str, f: np.ndarray) -> np.ndarray:
    """numpy loops over examples, samples and classes (natural log, temperature 1)."""
    s_count, b_count, c_count = f.shape
    out = np.zeros(b_count)
    for b in range(b_count):
        g = [math.log(sum(math.exp(f[s, b, c]) for s in range(s_count)) / s_count)
             for c in range(c_count)]
        per_sample_energy = [-math.log(sum(math.exp(f[s, b, c]) for c in range(c_count)))
                             for s in range(s_count)]
        out[b] = {"energy": -math.log(sum(math.exp(v) for v in g)),
                  "mean_energy": sum(per_sample_energy) / s_count,
                  "max_logit": -max(g),
                  "mean_max_logit": -sum(max(f[s, b]) for s in range(s_count)) / s_count}[name]
    return out


@pytest.mark.parametrize("name", LOGIT_MEASURES)
@pytest.mark.parametrize("seed", range(3))
def test_matches_brute_force(name: str, seed: int) -> None:
    f = _logits(seed)  # S=3, B=5, C=7: a swapped axis changes the shape
    out = measure(name)(f.softmax(-1), f)
    assert out.shape == (5,) and out.dtype == f.dtype
    np.testing.assert_allclose(out.numpy(), _reference(name, f.numpy()), rtol=1e-12)


@pytest.mark.parametrize("name", LOGIT_MEASURES)
def test_higher_means_more_ood(name: str) -> None:
    # Example 0: one large logit (confident, high density); example 1: all logits small.
    f = torch.tensor([[[10.0, 0.0, 0.0], [0.1, 0.0, 0.0]]] * 2, dtype=torch.float64)
    scores = measure(name)(f.softmax(-1), f)
    assert scores[1] > scores[0]


def test_predictive_and_mean_agree_on_identical_samples_and_jensen_otherwise() -> None:
    one = _logits(4, (1, 6, 5))
    same = one.expand(4, 6, 5)
    torch.testing.assert_close(energy(same), mean_energy(same))
    torch.testing.assert_close(max_logit(same), mean_max_logit(same))
    torch.testing.assert_close(energy(one), mean_energy(one))
    f = _logits(5, (4, 6, 5))
    assert (energy(f) <= mean_energy(f) + 1e-12).all()
    # Two samples confident in different classes: the predictive's largest logit is lower
    # than each sample's, so max_logit (its negation) is the more uncertain score.
    split = torch.tensor([[[10.0, 0.0]], [[0.0, 10.0]]], dtype=torch.float64)
    assert max_logit(split) > mean_max_logit(split)


def test_logit_measures_need_logits() -> None:
    f = _logits(6)
    with pytest.raises(ValueError, match=r"needs the logit samples \(S, B, C\)"):
        UNCERTAINTIES.get("energy")(f.softmax(-1))
    with pytest.raises(ValueError, match=r"must have shape \(S, B, C\), got shape \(5, 7\)"):
        energy(f[0])


def test_builtins_and_plain_function_plugins() -> None:
    assert set(LOGIT_MEASURES) <= set(BUILTIN_MEASURES)
    assert all(measure(m).needs_logits for m in LOGIT_MEASURES)
    plain = measure("max_prob")  # a plain function of probs is wrapped, called with probs
    assert plain.takes == ("probs",) and not plain.needs_logits
    f = _logits(7)
    both = Measure(lambda p, logits: p.amax(-1).mean(0) - logits.amax(-1).mean(0),
                   takes=("probs", "logits"), version=2)
    expected = f.softmax(-1).amax(-1).mean(0) - f.amax(-1).mean(0)
    torch.testing.assert_close(both(f.softmax(-1), f), expected)
    with pytest.raises(ValueError, match="Measure.takes must name some of"):
        Measure(energy, takes=("scores",))
    scores = all_measures(f.softmax(-1), f, names=LOGIT_MEASURES)
    assert list(scores) == LOGIT_MEASURES
