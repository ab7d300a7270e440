from __future__ import annotations

import dataclasses

import pytest
import torch

from robustbnn.attacks import PGD, GradientSettings, attack_labels
from tests._helpers import seeded
from tests._toys import build
from tests.attacks._models import SHAPE, NoisyLinear, linear


def test_defaults() -> None:
    attack = PGD()
    assert (attack.eps, attack.step_size, attack.steps, attack.objective, attack.random_start) \
        == (0.3, 0.01, 40, "expected", True)
    with pytest.raises(ValueError, match="restarts >= 1"):
        PGD(restarts=0)


@pytest.mark.parametrize("name", ["mlp", "mc_dropout"])
def test_ball_and_box_hold_after_every_restart(name: str) -> None:
    model = build(name)
    x, y = torch.rand(5, *SHAPE), torch.arange(5)
    runs = list(PGD(eps=0.1, step_size=0.05, steps=4, restarts=3, n_samples=2).runs(
        model, x, y, generator=seeded(0)))
    assert len(runs) == 3
    for x_adv, score in runs:
        assert (x_adv - x).abs().max() <= 0.1 + 1e-6
        assert x_adv.min() >= 0 and x_adv.max() <= 1
        assert score.shape == (5,)
    assert not torch.equal(runs[0][0], runs[1][0])  # independent random starts


def test_random_start_is_uniform_in_the_ball() -> None:
    model = linear()
    x, y = 0.25 + 0.5 * torch.rand(64, *SHAPE), torch.arange(64) % 7
    x_adv = PGD(eps=0.2, steps=0, n_samples=1)(model, x, y, generator=seeded(0))
    delta = x_adv - x
    assert delta.abs().max() <= 0.2 + 1e-6
    assert delta.min() < -0.19 and delta.max() > 0.19 and abs(delta.mean()) < 0.01
    assert torch.equal(PGD(eps=0.2, steps=0, random_start=False)(model, x, y), x)


def test_restarts_keep_the_strongest_per_example() -> None:
    model = NoisyLinear(sigma=2.0)
    x, y = torch.rand(6, *SHAPE), torch.arange(6)
    attack = PGD(eps=0.1, step_size=0.05, steps=2, restarts=4, n_samples=2)
    runs = list(attack.runs(model, x, y, generator=seeded(0)))
    xs, scores = torch.stack([r[0] for r in runs]), torch.stack([r[1] for r in runs])  # (R, B)
    best = scores.argmax(0)  # first maximum: ties keep the earlier restart
    expected = xs[best, torch.arange(6)]
    torch.testing.assert_close(attack(model, x, y, generator=seeded(0)), expected, rtol=0, atol=0)
    assert len(set(best.tolist())) > 1  # the test exercises a mixed selection


def test_single_restart_is_plain_pgd() -> None:
    model = linear()
    x, y = torch.rand(3, *SHAPE), torch.arange(3)
    attack = PGD(eps=0.1, step_size=0.03, steps=5, random_start=False, n_samples=1)
    x_adv = x
    for _ in range(5):
        xr = x_adv.clone().requires_grad_(True)
        loss = torch.nn.functional.cross_entropy(model.sample_logits(xr, 1)[0], y,
                                                 reduction="sum")
        (g,) = torch.autograd.grad(loss, xr)
        x_adv = torch.clamp(torch.clamp(x_adv + 0.03 * g.sign(), x - 0.1, x + 0.1), 0, 1)
    torch.testing.assert_close(attack(model, x, y), x_adv)


def test_predicted_label_is_fixed_on_the_clean_input() -> None:
    model = NoisyLinear(sigma=2.0)
    x, y = torch.rand(6, *SHAPE), torch.zeros(6, dtype=torch.long)
    attack = PGD(eps=0.1, step_size=0.05, steps=3, n_samples=3)
    got = dataclasses.replace(attack, label="predicted")(model, x, y, generator=seeded(5))
    g = seeded(5)
    labels = attack_labels(model, x, y, GradientSettings(3, label="predicted"), generator=g)
    torch.testing.assert_close(got, attack(model, x, labels, generator=g), rtol=0, atol=0)
