"""The DLR margin loss (robustbnn.attacks.margin) and the worst case per example over several
attacks' inputs (robustbnn.attacks.worst_case), on hand-made logits and toy linear models."""

from __future__ import annotations

import pytest
import torch

from robustbnn.attacks._grad import GradientSettings, mc_input_grad, mc_loss
from robustbnn.attacks.margin import dlr_loss
from robustbnn.attacks.pgd import PGD
from robustbnn.attacks.worst_case import worst_case
from tests._toys import LinearModel
from tests.attacks._models import NoisyLinear


def _brute_dlr(z: list[float], y: int) -> float:
    """Croce & Hein's untargeted DLR of one logit vector, from its sorted entries."""
    ranked = sorted(z, reverse=True)
    other = max(v for i, v in enumerate(z) if i != y)
    return -(z[y] - other) / (ranked[0] - ranked[2] + 1e-12)


def test_dlr_matches_the_formula_and_averages_over_samples() -> None:
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 5, 7, generator=g, dtype=torch.float64)  # (S, B, C), distinct
    logits[1, 2, 4] = logits[1, 2].max() + 2.0  # a sample where the label is the top class
    y = torch.tensor([4, 0, 4, 6, 1])
    want = [sum(_brute_dlr(logits[s, b].tolist(), int(y[b])) for s in range(3)) / 3
            for b in range(5)]
    got = dlr_loss(logits, y, reduction="none")
    assert got.shape == (5,)
    assert got.tolist() == pytest.approx(want, rel=1e-12)
    assert float(dlr_loss(logits, y)) == pytest.approx(sum(want), rel=1e-12)
    assert torch.equal(mc_loss(logits, y, "dlr", reduction="none"), got)  # the _grad hook


def test_dlr_is_scale_and_shift_invariant_unlike_ce() -> None:
    logits = torch.randn(2, 4, 6, generator=torch.Generator().manual_seed(1))
    y = torch.tensor([0, 5, 2, 3])
    assert torch.allclose(dlr_loss(7 * logits + 3, y, reduction="none"),
                          dlr_loss(logits, y, reduction="none"), atol=1e-6)
    ce = mc_loss(logits, y, "expected", reduction="none")
    assert not torch.allclose(mc_loss(7 * logits, y, "expected", reduction="none"), ce)


def test_dlr_refuses_two_classes() -> None:
    with pytest.raises(ValueError, match="at least 3 classes"):
        dlr_loss(torch.zeros(1, 2, 2), torch.tensor([0, 1]))


def test_dlr_gradient_survives_logits_that_saturate_ce() -> None:
    g = torch.Generator().manual_seed(2)
    w, b = torch.randn(42, 7, generator=g), torch.randn(7, generator=g)
    x = torch.rand(6, 1, 6, 7, generator=g)
    saturated = LinearModel(1e3 * w, 1e3 * b)
    y = saturated.sample_logits(x, 1)[0].argmax(-1)
    ce = mc_input_grad(saturated, x, y, GradientSettings(1, "expected"))
    dlr = mc_input_grad(saturated, x, y, GradientSettings(1, "dlr"))
    assert (ce.flatten(1).abs().amax(1) == 0).any()  # float32 one-hot softmax: no CE gradient
    assert (dlr.flatten(1).abs().amax(1) > 0).all()


def _three_class() -> LinearModel:
    return LinearModel(torch.eye(3), torch.zeros(3))  # logits = x, so p = softmax(x)


def test_worst_case_keeps_per_example_the_input_that_fools_the_model() -> None:
    model, y = _three_class(), torch.tensor([0, 0, 0])
    # Example 0: only the first input fools the model; example 1: only the second; example 2:
    # neither does, and the second is less sure of the label.
    first = torch.tensor([[0.0, 1.0, 0.0], [2.0, 0.0, 0.0], [1.0, 0.5, 0.0]])
    second = torch.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.9, 0.0]])
    x_adv, choice = worst_case(model, [first, second], y, n_samples=1)
    assert choice.tolist() == [0, 1, 1]
    assert torch.equal(x_adv, torch.stack([first[0], second[1], second[2]]))


def test_worst_case_puts_a_misclassified_input_before_a_lower_true_probability() -> None:
    model, y = _three_class(), torch.tensor([0])
    # p̄(y) 0.35, still the argmax, against p̄(y) 0.4 under another class's 0.6.
    right = torch.log(torch.tensor([[0.35, 0.33, 0.32]]))
    wrong = torch.log(torch.tensor([[0.40, 0.60, 1e-6]]))
    assert worst_case(model, [right, wrong], y, n_samples=1)[1].tolist() == [1]
    assert worst_case(model, [wrong, right], y, n_samples=1)[1].tolist() == [0]


def test_worst_case_scores_every_candidate_on_the_same_draws() -> None:
    model = NoisyLinear(sigma=3.0)
    x = torch.rand(40, 1, 6, 7, generator=torch.Generator().manual_seed(3))
    y = torch.randint(0, 7, (40,), generator=torch.Generator().manual_seed(4))
    # Two copies of one input tie only when both see the same posterior samples.
    _, choice = worst_case(model, [x, x.clone()], y, n_samples=2,
                           generator=torch.Generator().manual_seed(5))
    assert choice.tolist() == [0] * 40


def test_worst_case_refuses_no_candidates_and_mixed_shapes() -> None:
    model, y = _three_class(), torch.tensor([0])
    with pytest.raises(ValueError, match="at least one"):
        worst_case(model, [], y, n_samples=1)
    with pytest.raises(ValueError, match="one shape"):
        worst_case(model, [torch.zeros(1, 3), torch.zeros(2, 3)], y, n_samples=1)


def test_pgd_on_dlr_fools_a_saturated_model_that_pgd_on_ce_cannot() -> None:
    g = torch.Generator().manual_seed(6)
    w, b = torch.randn(42, 7, generator=g), torch.randn(7, generator=g)
    model = LinearModel(1e3 * w, 1e3 * b)
    x = torch.rand(60, 1, 6, 7, generator=g)
    y = model.sample_logits(x, 1)[0].argmax(-1)  # every clean point correct
    found = {}
    for objective in ("expected", "dlr"):
        attack = PGD(eps=0.15, step_size=0.015, steps=10, n_samples=1, objective=objective)
        found[objective] = attack(model, x, y, generator=torch.Generator().manual_seed(7))

    def accuracy(x_adv: torch.Tensor) -> float:
        return float((model.sample_logits(x_adv, 1)[0].argmax(-1) == y).double().mean())

    both, _ = worst_case(model, [found["expected"], found["dlr"]], y, n_samples=1)
    assert accuracy(found["expected"]) > 0.6  # CE's gradient vanished on most points
    assert accuracy(both) < 0.3
    assert accuracy(both) <= min(accuracy(found["expected"]), accuracy(found["dlr"]))
