"""The robustness leaderboard's attacks: PGD checkpoints, the detector-aware attack, the
uncertainty-lowering OOD attack and the gradient signal-to-noise ratio."""

from __future__ import annotations

import pytest
import torch

from robustbnn.attacks.adaptive import DIFFERENTIABLE_MEASURES, DetectorAwarePGD
from robustbnn.attacks.adversarial_ood import LowerUncertainty
from robustbnn.attacks.pgd import PGD
from robustbnn.attacks.reliability import gradient_snr
from robustbnn.ood import UNCERTAINTIES
from tests._helpers import seeded
from tests.attacks._models import SHAPE, NoisyLinear, NoModeSwitch, linear


def _data(n: int = 12, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.rand(n, *SHAPE, generator=seeded(seed))
    return x, torch.randint(0, 7, (n,), generator=seeded(seed + 1))


@pytest.mark.parametrize("restarts", [1, 3])
def test_checkpoints_are_the_shorter_attacks(restarts: int) -> None:
    model, (x, y) = NoisyLinear(sigma=0.5), _data()
    attack = PGD(eps=0.1, step_size=0.02, steps=6, restarts=restarts, n_samples=2)
    at = (0, 2, 6)
    got = attack.checkpoints(model, x, y, at, generator=seeded(5))
    assert list(got) == list(at)
    if restarts == 1:  # one run serves every count: the k-step iterate is the k-step attack
        assert torch.equal(got[6], attack(model, x, y, generator=seeded(5)))
        short = PGD(eps=0.1, step_size=0.02, steps=2, n_samples=2)
        assert torch.equal(got[2], short(model, x, y, generator=seeded(5)))
    for x_adv in got.values():
        assert (x_adv - x).abs().max() <= 0.1 + 1e-6


def test_checkpoints_share_starts_across_sample_counts() -> None:
    x, y = _data()
    starts = [PGD(eps=0.1, steps=3, n_samples=s).checkpoints(
        NoisyLinear(), x, y, (0,), generator=seeded(s), start_generator=seeded(9))[0]
        for s in (1, 4)]
    assert torch.equal(starts[0], starts[1])
    with pytest.raises(ValueError, match="step counts"):
        PGD().checkpoints(linear(), x, y, ())


def test_detector_aware_attack_stays_in_the_ball_reproducibly_without_mode_switches() -> None:
    x, y = _data()
    attack = DetectorAwarePGD(eps=0.05, step_size=0.01, steps=4, n_samples=3)
    a = attack(NoModeSwitch(NoisyLinear()), x, y, generator=seeded(1))
    b = attack(NoisyLinear(), x, y, generator=seeded(1))
    assert torch.equal(a, b) and a.shape == x.shape
    assert (a - x).abs().max() <= 0.05 + 1e-6 and a.min() >= 0 and a.max() <= 1


def test_detector_aware_attack_keeps_misclassified_inputs_with_lower_uncertainty() -> None:
    """On a deterministic model its estimate is exact: every returned input it misclassified
    has uncertainty no higher than the plain attack's misclassified result."""
    model = linear(scale=0.3)
    x, _ = _data(40)
    y = model.sample_logits(x, 1)[0].argmax(-1)
    plain = PGD(eps=0.3, step_size=0.03, steps=20, n_samples=1)(model, x, y, generator=seeded(0))
    for measure in ("predictive_entropy", "max_prob"):
        adaptive = DetectorAwarePGD(eps=0.3, step_size=0.03, steps=20, n_samples=1,
                                    measure=measure)(model, x, y, generator=seeded(0))
        u = UNCERTAINTIES.get(measure)
        probs = {k: torch.softmax(model.sample_logits(v, 1), -1) for k, v in
                 (("plain", plain), ("adaptive", adaptive))}
        wrong = {k: p.mean(0).argmax(-1) != y for k, p in probs.items()}
        assert wrong["adaptive"].sum() >= 0.9 * wrong["plain"].sum()
        both = wrong["plain"] & wrong["adaptive"]
        assert both.any()
        assert (u(probs["adaptive"])[both].mean() < u(probs["plain"])[both].mean())


def test_detector_aware_attack_rejects_a_measure_without_gradient() -> None:
    with pytest.raises(ValueError, match="piecewise constant"):
        DetectorAwarePGD(measure="variation_ratio")
    assert set(DIFFERENTIABLE_MEASURES) <= set(UNCERTAINTIES.names())


@pytest.mark.parametrize("measure", DIFFERENTIABLE_MEASURES)
def test_lower_uncertainty_never_raises_a_deterministic_models_uncertainty(measure: str) -> None:
    model, (x, _) = linear(scale=0.2), _data(30)
    x_adv = LowerUncertainty(measure=measure, eps=0.1, step_size=0.02, steps=5,
                             n_samples=1)(model, x)
    u = UNCERTAINTIES.get(measure)
    before = u(torch.softmax(model.sample_logits(x, 1), -1))
    after = u(torch.softmax(model.sample_logits(x_adv, 1), -1))
    assert (after <= before + 1e-6).all()
    if measure != "bald":  # BALD of one network is 0 everywhere
        assert after.mean() < before.mean()
    assert (x_adv - x).abs().max() <= 0.1 + 1e-6


def test_gradient_snr_against_explicit_per_sample_gradients() -> None:
    model, (x, y) = NoisyLinear(sigma=1.0), _data(5)
    snr = gradient_snr(model, x, y, n_samples=6, generator=seeded(3))
    g, grads = seeded(3), []
    for _ in range(6):
        xv = x.clone().requires_grad_(True)
        loss = torch.nn.functional.cross_entropy(model.sample_logits(xv, 1, generator=g)[0], y,
                                                 reduction="sum")
        grads.append(torch.autograd.grad(loss, xv)[0].flatten(1).double())
    grads = torch.stack(grads)
    noise = (grads - grads.mean(0)).square().sum(-1).sum(0) / 5
    assert snr == pytest.approx(grads.mean(0).norm(dim=-1) / noise.sqrt(), rel=1e-9)
    assert snr.shape == (5,)


def test_gradient_snr_falls_with_posterior_spread_and_is_infinite_without() -> None:
    x, y = _data(20)
    low, high = (gradient_snr(NoisyLinear(sigma=s), x, y, n_samples=8,
                              generator=seeded(0)).median() for s in (0.1, 3.0))
    assert high < low
    assert torch.isinf(gradient_snr(linear(), x, y, n_samples=2, generator=None)).all()
    with pytest.raises(ValueError, match="n_samples >= 2"):
        gradient_snr(linear(), x, y, n_samples=1, generator=None)
