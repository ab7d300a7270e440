from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from robustbnn.attacks import FGSM, GradientSettings, mc_input_grad
from robustbnn.attacks._grad import mc_loss
from tests._toys import LinearModel, build


def _linear() -> LinearModel:
    g = torch.Generator().manual_seed(0)
    return LinearModel(torch.randn(6 * 7, 7, generator=g), torch.randn(7, generator=g))


def test_fgsm_equals_closed_form_on_linear_model() -> None:
    model = _linear()
    x, y = torch.rand(5, 1, 6, 7), torch.tensor([0, 1, 2, 3, 4])
    # d CE / d x = W (softmax - onehot), by hand
    p = torch.softmax(x.flatten(1) @ model.weight + model.bias, -1)
    grad = ((p - F.one_hot(y, 7)) @ model.weight.T).detach().reshape_as(x)
    expected = (x + 0.05 * grad.sign()).clamp(0, 1)
    torch.testing.assert_close(FGSM(eps=0.05)(model, x, y), expected, rtol=0, atol=0)


@pytest.mark.parametrize("name", ["mlp", "mc_dropout"])
@pytest.mark.parametrize("clip", [True, False])
def test_eps_ball_and_box(name: str, clip: bool) -> None:
    model = build(name)
    x, y = torch.rand(5, 1, 6, 7), torch.arange(5)
    x_adv = FGSM(eps=0.3, n_samples=4, clip=clip)(model, x, y,
                                                   generator=torch.Generator().manual_seed(0))
    assert x_adv.shape == x.shape
    assert (x_adv - x).abs().max() <= 0.3 + 1e-6
    if clip:
        assert x_adv.min() >= 0 and x_adv.max() <= 1
    else:
        assert (x_adv - x).abs().min() == pytest.approx(0.3)


def test_objectives_agree_for_deterministic_model() -> None:
    model = build("mlp")
    x, y = torch.rand(5, 1, 6, 7), torch.arange(5)
    a = mc_input_grad(model, x, y, GradientSettings(3, "predictive"))
    b = mc_input_grad(model, x, y, GradientSettings(3, "expected"))
    torch.testing.assert_close(a, b)


def test_objectives_differ_for_stochastic_model() -> None:
    logits = torch.randn(4, 3, 5)
    y = torch.tensor([0, 1, 2])
    pred = mc_loss(logits, y, "predictive")
    expect = mc_loss(logits, y, "expected")
    brute = -torch.log(torch.softmax(logits, -1).mean(0)[torch.arange(3), y]).sum()
    torch.testing.assert_close(pred, brute)
    assert expect >= pred  # Jensen: E[-log p] >= -log E[p]


def test_gradient_sums_over_batch() -> None:
    model = _linear()
    x, y = torch.rand(4, 1, 6, 7), torch.arange(4)
    whole = mc_input_grad(model, x, y, GradientSettings(1))
    part = mc_input_grad(model, x[:2], y[:2], GradientSettings(1))
    torch.testing.assert_close(whole[:2], part)


def test_attack_reproducible_under_generator() -> None:
    model = build("mc_dropout")
    x, y = torch.rand(5, 1, 6, 7), torch.arange(5)
    attack = FGSM(eps=0.1, n_samples=2)
    a = attack(model, x, y, generator=torch.Generator().manual_seed(3))
    b = attack(model, x, y, generator=torch.Generator().manual_seed(3))
    torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_predicted_label_policy_uses_model_prediction() -> None:
    model = _linear()
    x = torch.rand(5, 1, 6, 7)
    pred = (x.flatten(1) @ model.weight + model.bias).argmax(-1)
    wrong = (pred + 1) % 7
    a = FGSM(eps=0.1, label="predicted")(model, x, wrong)
    b = FGSM(eps=0.1, label="true")(model, x, pred)
    torch.testing.assert_close(a, b)


def test_unknown_options_raise() -> None:
    model = _linear()
    x, y = torch.rand(2, 1, 6, 7), torch.arange(2)
    with pytest.raises(ValueError, match="unknown attack objective 'eot'"):
        FGSM(eps=0.1, objective="eot")(model, x, y)
    with pytest.raises(ValueError, match="unknown label policy 'gold'"):
        FGSM(eps=0.1, label="gold")(model, x, y)


def test_paper_grids_and_presets() -> None:
    from robustbnn.attacks import EPS_GRIDS, PRESETS, fgsm_grid

    assert len(EPS_GRIDS["bhn"]) == 20 and EPS_GRIDS["bhn"][0] == 0.001
    assert EPS_GRIDS["bhn"][-1] == 0.5
    assert EPS_GRIDS["ligal"] == tuple(round(x, 2) for x in
                                       torch.arange(0, 0.501, 0.02, dtype=torch.float64).tolist())
    assert len(EPS_GRIDS["ligal"]) == 26 and EPS_GRIDS["ligal"][-1] == 0.5
    bhn = fgsm_grid("bhn")
    assert [a.eps for a in bhn] == list(EPS_GRIDS["bhn"])
    assert {(a.n_samples, a.label, a.clip) for a in bhn} == {(1, "true", False)}
    ligal = fgsm_grid("ligal", n_samples=32)
    assert {(a.n_samples, a.label, a.clip) for a in ligal} == {(32, "predicted", True)}
    assert set(PRESETS) == set(EPS_GRIDS)
    with pytest.raises(KeyError, match="unknown FGSM preset 'madry'; known: \\['bhn', 'ligal'\\]"):
        fgsm_grid("madry")


def test_targeted_fgsm_closed_form() -> None:
    model = _linear()
    x, y, t = torch.rand(5, 1, 6, 7), torch.arange(5), torch.tensor([6, 6, 5, 5, 0])
    p = torch.softmax(x.flatten(1) @ model.weight + model.bias, -1)
    # d log p_t / d x = W (onehot_t - p)
    grad = ((F.one_hot(t, 7) - p) @ model.weight.T).detach().reshape_as(x)
    expected = (x + 0.05 * grad.sign()).clamp(0, 1)
    torch.testing.assert_close(FGSM(eps=0.05)(model, x, y, target=t), expected, rtol=0, atol=0)


def test_direction_matches_call() -> None:
    model = build("mc_dropout")
    x, y = torch.rand(5, 1, 6, 7), torch.arange(5)
    attack = FGSM(eps=0.2, n_samples=3, label="predicted", clip=False)
    d = attack.direction(model, x, y, generator=torch.Generator().manual_seed(0))
    x_adv = attack(model, x, y, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(x_adv, x + 0.2 * d, rtol=0, atol=0)


@pytest.mark.parametrize("clip", [True, False])
def test_one_direction_serves_every_eps_through_perturb(clip: bool) -> None:
    model = build("mc_dropout")
    x, y = torch.rand(5, 1, 6, 7), torch.arange(5)
    attack = FGSM(eps=0.0, n_samples=3, clip=clip)
    d = attack.direction(model, x, y, generator=torch.Generator().manual_seed(0))
    for eps in (0.1, 0.6):
        at = FGSM(eps=eps, n_samples=3, clip=clip)
        x_adv = at(model, x, y, generator=torch.Generator().manual_seed(0))
        torch.testing.assert_close(at.perturb(x, d), x_adv, rtol=0, atol=0)
    # a step of 0.6 takes some pixels out of [0, 1] unless clipped
    assert bool(x_adv.min() >= 0 and x_adv.max() <= 1) == clip
