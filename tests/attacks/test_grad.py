from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from robustbnn.attacks import GradientSettings, attack_labels, mc_input_grad
from robustbnn.attacks._grad import (
    as_target,
    attack_objective,
    mc_loss,
    mc_objective_per_example,
    predicted_labels,
)
from tests.attacks._models import SHAPE, NoisyLinear, linear


@pytest.mark.parametrize("objective", ["predictive", "expected"])
def test_per_example_loss_sums_to_total(objective: str) -> None:
    logits, y = torch.randn(4, 3, 5), torch.tensor([0, 1, 2])
    per = mc_loss(logits, y, objective, reduction="none")
    assert per.shape == (3,)
    torch.testing.assert_close(per.sum(), mc_loss(logits, y, objective))
    if objective == "predictive":
        brute = -torch.log(torch.softmax(logits, -1).mean(0)[torch.arange(3), y])
    else:
        ce = F.cross_entropy(logits.transpose(1, 2), y.expand(4, 3), reduction="none")  # (S, B)
        brute = ce.mean(0)
    torch.testing.assert_close(per, brute)


@pytest.mark.parametrize("objective", ["predictive", "expected"])
def test_target_gradient_ascends_log_probability_of_target(objective: str) -> None:
    model = NoisyLinear()
    x, y, t = torch.rand(3, *SHAPE), torch.tensor([0, 1, 2]), torch.tensor([4, 4, 6])
    five = GradientSettings(5, objective)
    got = mc_input_grad(model, x, y, five, target=t, generator=torch.Generator().manual_seed(0))
    ce = mc_input_grad(model, x, t, five, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(got, -ce)
    # the predictive objective is log p̄(target), by brute force
    xr = x.clone().requires_grad_(True)
    logits = model.sample_logits(xr, 5, generator=torch.Generator().manual_seed(0))
    if objective == "predictive":
        value = torch.softmax(logits, -1).mean(0)[torch.arange(3), t].log().sum()
        (brute,) = torch.autograd.grad(value, xr)
        torch.testing.assert_close(got, brute)


def test_int_target_is_broadcast() -> None:
    x = torch.rand(4, *SHAPE)
    assert as_target(3, x).tolist() == [3, 3, 3, 3]
    assert as_target(torch.tensor(2), x).tolist() == [2, 2, 2, 2]
    model = linear()
    a = mc_input_grad(model, x, torch.zeros(4, dtype=torch.long), GradientSettings(1), target=3)
    b = mc_input_grad(model, x, torch.zeros(4, dtype=torch.long), GradientSettings(1),
                      target=torch.full((4,), 3))
    torch.testing.assert_close(a, b)


def test_predicted_label_comes_from_the_same_draws() -> None:
    model = NoisyLinear(sigma=3.0)
    x, wrong = torch.rand(6, *SHAPE), torch.zeros(6, dtype=torch.long)
    logits = model.sample_logits(x, 4, generator=torch.Generator().manual_seed(7))
    pred = predicted_labels(logits)
    torch.testing.assert_close(pred, torch.softmax(logits, -1).mean(0).argmax(-1))
    a = mc_input_grad(model, x, wrong, GradientSettings(4, label="predicted"),
                      generator=torch.Generator().manual_seed(7))
    b = mc_input_grad(model, x, pred, GradientSettings(4, label="true"),
                      generator=torch.Generator().manual_seed(7))
    torch.testing.assert_close(a, b)


def test_attack_labels() -> None:
    model = NoisyLinear(sigma=3.0)
    x, y = torch.rand(6, *SHAPE), torch.zeros(6, dtype=torch.long)
    g = torch.Generator().manual_seed(0)
    state = g.get_state()
    assert attack_labels(model, x, y, GradientSettings(4, label="true"), generator=g) is y
    assert torch.equal(g.get_state(), state)  # no draw for the true label
    got = attack_labels(model, x, y, GradientSettings(4, label="predicted"), generator=g)
    expected = predicted_labels(model.sample_logits(x, 4,
                                                    generator=torch.Generator().manual_seed(0)))
    torch.testing.assert_close(got, expected)
    with pytest.raises(ValueError, match="unknown label policy 'gold'"):
        GradientSettings(1, label="gold")


def test_objective_per_example_matches_attack_objective() -> None:
    model = NoisyLinear()
    x, y = torch.rand(3, *SHAPE), torch.tensor([0, 1, 2])
    per = mc_objective_per_example(model, x, y, GradientSettings(4, "expected"), target=5,
                                   generator=torch.Generator().manual_seed(0))
    logits = model.sample_logits(x, 4, generator=torch.Generator().manual_seed(0))
    total = attack_objective(logits, y, objective="expected", target=5)
    torch.testing.assert_close(per.sum(), total)
    assert not per.requires_grad and (per <= 0).all()  # log-probabilities of the target


def test_unknown_objective_raises() -> None:
    with pytest.raises(ValueError, match="unknown attack objective 'eot'"):
        GradientSettings(1, objective="eot")


def test_cw_margin_matches_brute_force_and_sums_per_example() -> None:
    logits, y = torch.randn(4, 3, 5), torch.tensor([0, 3, 2])
    per = mc_loss(logits, y, "cw", reduction="none")
    brute = torch.stack([
        torch.stack([torch.cat([logits[s, b, :y[b]], logits[s, b, y[b] + 1:]]).max()
                     - logits[s, b, y[b]] for b in range(3)]) for s in range(4)]).mean(0)
    torch.testing.assert_close(per, brute)
    torch.testing.assert_close(per.sum(), mc_loss(logits, y, "cw"))


def test_cw_margin_keeps_a_gradient_where_the_softmax_saturates() -> None:
    # A top-two logit gap of 200 (as a trained VHN's): float32 softmax is one-hot, so the CE's
    # input gradient is exactly zero, while the margin's is not.
    logits = torch.tensor([[[200.0, 0.0, 1.0]]], requires_grad=True)
    y = torch.tensor([0])
    (ce,) = torch.autograd.grad(mc_loss(logits, y, "predictive"), logits)
    (cw,) = torch.autograd.grad(mc_loss(logits, y, "cw"), logits)
    assert torch.count_nonzero(ce) == 0
    torch.testing.assert_close(cw, torch.tensor([[[-1.0, 0.0, 1.0]]]))


def test_cw_targeted_ascends_the_target_margin() -> None:
    logits = torch.tensor([[[3.0, 1.0, 0.0]]])
    value = attack_objective(logits, torch.tensor([0]), objective="cw", target=2)
    assert value.item() == pytest.approx(0.0 - 3.0)  # z_target − max_{j≠target} z_j
