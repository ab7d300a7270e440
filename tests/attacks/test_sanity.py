from __future__ import annotations

import pytest
import torch

from robustbnn.attacks import FGSM, PGD, GradientSettings, TargetedIFGSM
from robustbnn.attacks.sanity import (
    Check,
    FrozenSample,
    accuracy_monotone,
    beats_random_noise,
    fixed_randomness_succeeds,
    gradient_nonzero,
)
from robustbnn.contract.predict import Evaluation, sample_probs
from tests._helpers import seeded
from tests.attacks._models import (
    SHAPE,
    ConstantModel,
    NoisyLinear,
    NoModeSwitch,
    Recorder,
    linear,
    rounded_linear,
)


def _predicted(model, x) -> torch.Tensor:
    return sample_probs(model, x, 1).mean(0).argmax(-1)


def test_gradient_nonzero() -> None:
    x, y = torch.rand(5, *SHAPE), torch.arange(5)
    assert gradient_nonzero(ConstantModel(), x, y) == Check(0.0, False, {"n_zero": 5.0})
    assert gradient_nonzero(rounded_linear(), x, y).value == 0.0
    assert gradient_nonzero(linear(), x, y) == Check(1.0, True, {"n_zero": 0.0})
    stochastic = gradient_nonzero(NoisyLinear(), x, y, GradientSettings(3, "expected"),
                                  generator=seeded(0))
    assert stochastic.passed


def test_accuracy_monotone() -> None:
    assert accuracy_monotone([0.0, 0.1, 0.3], [0.9, 0.6, 0.2]) == Check(0.0, True,
                                                                        {"max_rise": 0.0})
    increasing = accuracy_monotone([0.0, 0.1, 0.3], [0.2, 0.5, 0.75])
    assert not increasing.passed and increasing.value == pytest.approx(0.55)
    # sorted by eps first; a rise anywhere after a dip counts from the lowest point
    assert accuracy_monotone([0.3, 0.0, 0.1], [0.5, 0.9, 0.25]).value == pytest.approx(0.25)
    assert accuracy_monotone([0.0, 0.1], [0.5, 0.52], tol=0.05).passed
    assert accuracy_monotone([0.0], [0.5]).passed
    with pytest.raises(ValueError, match="same non-zero length"):
        accuracy_monotone([0.0, 0.1], [0.5])


def test_beats_random_noise() -> None:
    x = 0.2 + 0.6 * torch.rand(64, *SHAPE)
    model = linear(scale=0.3)
    y = _predicted(model, x)
    ok = beats_random_noise(model, x, y, FGSM(eps=0.1), Evaluation(1, seeded(1)),
                            generator=seeded(0))
    assert ok.passed and ok.detail["attack_accuracy"] < ok.detail["noise_accuracy"]
    assert ok.value == pytest.approx(ok.detail["noise_accuracy"] - ok.detail["attack_accuracy"])
    # a gradient-masked model: FGSM cannot move, random noise of 0.45 flips round(x)
    masked = rounded_linear()
    y = _predicted(masked, x)
    bad = beats_random_noise(masked, x, y, FGSM(eps=0.45), Evaluation(1, seeded(1)),
                             generator=seeded(0))
    assert not bad.passed and bad.detail["attack_accuracy"] == 1.0
    with pytest.raises(ValueError, match="needs an attack with an eps budget"):
        beats_random_noise(model, x, y, TargetedIFGSM(steps=1), Evaluation(1, seeded(1)),
                           generator=seeded(0))


def test_frozen_sample_is_one_deterministic_member() -> None:
    model = NoisyLinear(sigma=2.0)
    member = seeded(3)
    state = member.get_state()
    frozen = FrozenSample(model, member)
    assert torch.equal(member.get_state(), state)  # not advanced
    x = torch.rand(4, *SHAPE)
    a = frozen.sample_logits(x, 3, generator=seeded(0))
    b = frozen.sample_logits(x, 3)
    assert a.shape == (3, 4, 7)
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    torch.testing.assert_close(a[0], a[2], rtol=0, atol=0)
    torch.testing.assert_close(a[:1], model.sample_logits(x, 1, generator=seeded(3)))
    assert not torch.equal(a[0], model.sample_logits(x, 1, generator=seeded(4))[0])


def test_fixed_randomness_succeeds() -> None:
    model = NoisyLinear(sigma=2.0)
    x = 0.2 + 0.6 * torch.rand(32, *SHAPE)
    member = seeded(3)
    y = _predicted(FrozenSample(model, member), x)
    check = fixed_randomness_succeeds(model, x, y, FGSM(eps=0.2, n_samples=1), member=member)
    assert check.passed and check.detail["clean_accuracy"] == 1.0
    assert check.value == pytest.approx(1.0 - check.detail["attack_accuracy"])
    pgd = fixed_randomness_succeeds(model, x, y, PGD(eps=0.2, step_size=0.05, steps=5),
                                    member=member, generator=seeded(0))
    assert pgd.passed
    masked = fixed_randomness_succeeds(ConstantModel(), x, torch.full((32,), 6),
                                       FGSM(eps=0.2), member=member)
    assert masked == Check(0.0, False, {"clean_accuracy": 1.0, "attack_accuracy": 1.0})


def test_checks_use_only_their_generators_and_never_switch_modes() -> None:
    model = Recorder(NoModeSwitch(NoisyLinear()))
    x, y = torch.rand(6, *SHAPE), torch.arange(6)
    attack_gen, eval_gen = seeded(0), seeded(1)
    gradient_nonzero(model, x, y, GradientSettings(2), generator=attack_gen)
    beats_random_noise(model, x, y, PGD(eps=0.1, steps=2, n_samples=2), Evaluation(2, eval_gen),
                       generator=attack_gen)
    assert {(id(g), grad) for g, grad in model.calls} == {
        (id(attack_gen), True), (id(attack_gen), False), (id(eval_gen), False)}
    evals = [g for g, grad in model.calls if g is eval_gen]
    assert len(evals) == 2  # attacked and noisy inputs, one evaluation each
    fixed_randomness_succeeds(model, x, y, FGSM(eps=0.1), member=seeded(2))
