"""Contract tests every registered attack must pass (STYLE.md §4, §8)."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from robustbnn.attacks import ATTACKS, FGSM, PGD, TargetedIFGSM
from robustbnn.contract.predict import sample_probs
from tests._helpers import seeded
from tests._registrations import ROOT, registered_in
from tests._toys import build
from tests.attacks._models import (
    SHAPE,
    SMALL,
    NoisyLinear,
    NoModeSwitch,
    Recorder,
    linear,
    make,
)

NAMES = ATTACKS.names()
# attacks that can be untargeted carry a label policy
UNTARGETED = [n for n in NAMES if "label" in {f.name for f in dataclasses.fields(ATTACKS.get(n))}]


def test_registry_names_are_file_names() -> None:
    assert NAMES == registered_in(ROOT / "robustbnn" / "attacks" / "__init__.py",
                                  "ATTACKS.register")
    assert {FGSM, TargetedIFGSM, PGD} <= {ATTACKS.get(name) for name in NAMES}
    for name in NAMES:
        assert ATTACKS.get(name).__module__ == f"robustbnn.attacks.{name}"
        assert dataclasses.is_dataclass(ATTACKS.get(name))
    with pytest.raises(KeyError) as info:
        ATTACKS.get("cw")
    assert str(info.value) == f"unknown attack 'cw'; known: {sorted(NAMES)}"


@pytest.mark.parametrize("name", NAMES)
def test_attacks_are_frozen(name: str) -> None:
    attack = make(name)
    with pytest.raises(dataclasses.FrozenInstanceError):
        attack.n_samples = 3
    # asdict(attack) goes into the results: exactly the hyper-parameters, as given, as JSON
    fields = dataclasses.fields(ATTACKS.get(name))
    expected = {f.name: SMALL.get(f.name, f.default) for f in fields}
    assert dataclasses.MISSING not in expected.values()
    assert dataclasses.asdict(attack) == expected
    assert json.loads(json.dumps(dataclasses.asdict(attack))) == expected


@pytest.mark.parametrize("model_name", ["mlp", "mc_dropout"])
@pytest.mark.parametrize("name", NAMES)
def test_eps_ball_and_box(name: str, model_name: str) -> None:
    model = build(model_name)
    x, y = torch.rand(5, *SHAPE), torch.arange(5)
    for target in (None, 3):
        x_adv = make(name, eps=0.05)(model, x, y, target=target, generator=seeded(0))
        assert x_adv.shape == x.shape and x_adv.dtype == x.dtype
        assert (x_adv - x).abs().max() <= 0.05 + 1e-6
        assert x_adv.min() >= 0 and x_adv.max() <= 1
        assert not x_adv.requires_grad


@pytest.mark.parametrize("name", NAMES)
def test_targeted_attack_raises_target_probability(name: str) -> None:
    model = linear()
    x, y = 0.3 + 0.4 * torch.rand(8, *SHAPE), torch.arange(8) % 7
    target = torch.full((8,), 5)
    attack = make(name, eps=0.05, step_size=0.01, n_samples=1, random_start=False)
    x_adv = attack(model, x, y, target=target, generator=seeded(0))
    before = sample_probs(model, x, 1)[0, :, 5]
    after = sample_probs(model, x_adv, 1)[0, :, 5]
    assert (after > before).all()


@pytest.mark.parametrize("name", UNTARGETED)
def test_untargeted_attack_lowers_true_probability(name: str) -> None:
    model = linear()
    x, y = 0.3 + 0.4 * torch.rand(8, *SHAPE), torch.arange(8) % 7
    x_adv = make(name, eps=0.05, n_samples=1, random_start=False)(model, x, y,
                                                                  generator=seeded(0))
    before = sample_probs(model, x, 1)[0, torch.arange(8), y]
    after = sample_probs(model, x_adv, 1)[0, torch.arange(8), y]
    assert (after < before).all()


@pytest.mark.parametrize("name", NAMES)
def test_objectives_agree_for_deterministic_model_with_one_sample(name: str) -> None:
    model = build("mlp")
    x, y = torch.rand(5, *SHAPE), torch.arange(5)
    a = make(name, n_samples=1, objective="predictive")(model, x, y, generator=seeded(1))
    b = make(name, n_samples=1, objective="expected")(model, x, y, generator=seeded(1))
    torch.testing.assert_close(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("name", NAMES)
def test_reproducible_under_generator(name: str) -> None:
    model = build("mc_dropout")
    x, y = torch.rand(5, *SHAPE), torch.arange(5)
    attack = make(name)
    a = attack(model, x, y, generator=seeded(3))
    b = attack(model, x, y, generator=seeded(3))
    c = attack(model, x, y, generator=seeded(4))
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert not torch.equal(a, c)


@pytest.mark.parametrize("model_name", ["mlp", "mc_dropout"])
@pytest.mark.parametrize("name", NAMES)
def test_attack_never_switches_module_mode(name: str, model_name: str) -> None:
    model = NoModeSwitch(build(model_name))
    with pytest.raises(AssertionError, match="switched the module mode"):
        model.inner.eval()  # the spy is armed
    x, y = torch.rand(3, *SHAPE), torch.arange(3)
    for label in ("true", "predicted"):
        make(name, label=label)(model, x, y, generator=seeded(0))
    make(name)(model, x, y, target=2, generator=seeded(0))


@pytest.mark.parametrize("label", ["true", "predicted"])
@pytest.mark.parametrize("name", NAMES)
def test_attack_consumes_only_the_attack_generator(name: str, label: str) -> None:
    model = Recorder(NoisyLinear())
    x, y = torch.rand(4, *SHAPE), torch.arange(4)
    attack_gen, eval_gen = seeded(0), seeded(1)
    eval_state = eval_gen.get_state()
    x_adv = make(name, label=label)(model, x, y, generator=attack_gen)
    assert model.calls and all(g is attack_gen for g, _ in model.calls)
    assert torch.equal(eval_gen.get_state(), eval_state)
    # and evaluating does not touch the attack generator
    attack_state = attack_gen.get_state()
    sample_probs(model, x_adv, 3, generator=eval_gen)
    assert torch.equal(attack_gen.get_state(), attack_state)
    assert not torch.equal(eval_gen.get_state(), eval_state)
