from __future__ import annotations

import pytest
import torch

from robustbnn.attacks import TargetedIFGSM, exclude_target, targeted_curve
from robustbnn.contract.predict import (
    LIVE_WIDTHS_GRAD,
    Evaluation,
    chunk_rows,
    row_width,
    sample_probs,
)
from robustbnn.ood import builtin_measures
from tests._helpers import seeded
from tests.attacks._models import SHAPE, NoisyLinear, Recorder, linear


def test_paper_defaults() -> None:
    attack = TargetedIFGSM()
    assert (attack.step_size, attack.steps, attack.n_samples, attack.target_class,
            attack.objective, attack.eps) == (0.01, 100, 10, 0, "predictive", None)
    assert attack.checkpoints() == list(range(0, 101, 10))


def test_checkpoints_include_the_last_step() -> None:
    assert TargetedIFGSM(steps=25, checkpoint_every=10).checkpoints() == [0, 10, 20, 25]
    assert TargetedIFGSM(steps=0).checkpoints() == [0]
    with pytest.raises(ValueError, match="checkpoint_every >= 1"):
        TargetedIFGSM(checkpoint_every=0)


def test_exclude_target() -> None:
    x, y = torch.arange(6.0)[:, None], torch.tensor([0, 1, 0, 2, 3, 0])
    xs, ys = exclude_target(x, y)
    assert ys.tolist() == [1, 2, 3] and xs[:, 0].tolist() == [1.0, 3.0, 4.0]
    assert exclude_target(x, y, 2)[1].tolist() == [0, 1, 0, 3, 0]


def test_each_step_is_a_signed_target_gradient_step() -> None:
    model = linear()
    x, y = torch.rand(4, *SHAPE), torch.tensor([1, 2, 3, 4])
    traj = TargetedIFGSM(steps=3, checkpoint_every=1, n_samples=1).trajectory(model, x, y)
    assert list(traj) == [0, 1, 2, 3] and torch.equal(traj[0], x)
    w = model.weight.detach()
    for step in (1, 2, 3):
        prev = traj[step - 1]
        p = torch.softmax(prev.flatten(1) @ w + model.bias.detach(), -1)
        # d log p_0 / d x = W (onehot_0 - p), by hand
        grad = ((torch.nn.functional.one_hot(torch.zeros(4, dtype=torch.long), 7) - p) @ w.T)
        expected = (prev + 0.01 * grad.reshape_as(x).sign()).clamp(0, 1)
        torch.testing.assert_close(traj[step], expected, rtol=0, atol=1e-7)


def test_call_returns_last_checkpoint_and_eps_bounds() -> None:
    model = NoisyLinear()
    x, y = torch.rand(4, *SHAPE), torch.tensor([1, 2, 3, 4])
    attack = TargetedIFGSM(steps=12, step_size=0.05, n_samples=2, checkpoint_every=5)
    traj = attack.trajectory(model, x, y, generator=seeded(0))
    assert list(traj) == [0, 5, 10, 12]
    torch.testing.assert_close(attack(model, x, y, generator=seeded(0)), traj[12], rtol=0, atol=0)
    for step, x_adv in traj.items():
        assert (x_adv - x).abs().max() <= 0.05 * step + 1e-6
        assert x_adv.min() >= 0 and x_adv.max() <= 1
    bounded = TargetedIFGSM(steps=12, step_size=0.05, eps=0.1, n_samples=2)
    assert (bounded(model, x, y, generator=seeded(0)) - x).abs().max() <= 0.1 + 1e-6


def test_target_probability_rises_along_the_trajectory() -> None:
    model = linear()
    x, y = exclude_target(0.3 + 0.4 * torch.rand(12, *SHAPE), torch.arange(12) % 7)
    traj = TargetedIFGSM(steps=30, step_size=0.01, n_samples=1).trajectory(model, x, y)
    p0 = torch.stack([sample_probs(model, xa, 1)[0, :, 0] for xa in traj.values()])  # (T, B)
    assert (p0[1:] > p0[:-1]).all()


def test_curve_checkpoints_and_fields() -> None:
    model = linear()
    x, y = exclude_target(torch.rand(10, *SHAPE), torch.arange(10) % 7)
    attack = TargetedIFGSM(steps=30, step_size=0.05, n_samples=1)
    curve = targeted_curve(model, x, y, attack, Evaluation(3, seeded(1)), generator=seeded(0))
    assert [row["step"] for row in curve] == [0, 10, 20, 30]
    expected_keys = {"step", "accuracy", "target_success", "linf", "l2", "n",
                     *builtin_measures(logits=False)}
    assert all(set(row) == expected_keys for row in curve)
    assert curve[0]["linf"] == 0 and curve[0]["l2"] == 0
    assert curve[-1]["target_success"] == 1.0 and curve[-1]["accuracy"] == 0.0
    assert all(row["linf"] <= 0.05 * row["step"] + 1e-6 for row in curve)
    assert all(row["n"] == len(y) for row in curve)
    # the clean row agrees with a direct evaluation
    pred = sample_probs(model, x, 3).mean(0).argmax(-1)
    assert curve[0]["accuracy"] == pytest.approx((pred == y).double().mean().item())
    assert curve[0]["target_success"] == 0.0


def test_curve_is_the_same_in_chunks() -> None:
    model = linear()
    x, y = exclude_target(torch.rand(10, *SHAPE), torch.arange(10) % 7)
    attack = TargetedIFGSM(steps=10, step_size=0.05, n_samples=1, checkpoint_every=5)
    whole = targeted_curve(model, x, y, attack, Evaluation(1, seeded(1)), generator=seeded(0))
    # a memory budget of 3 (sample, example) rows per gradient pass: chunks of 3 examples
    three_rows = 3 * 4 * LIVE_WIDTHS_GRAD * row_width(model) / 2**20
    assert chunk_rows(model, three_rows, grad=True) == 3
    chunked = targeted_curve(model, x, y, attack, Evaluation(1, seeded(1), three_rows),
                             generator=seeded(0))
    for a, b in zip(whole, chunked, strict=True):
        assert a == pytest.approx(b)


def test_curve_separates_attack_and_evaluation_samples() -> None:
    model = Recorder(NoisyLinear())
    x, y = torch.rand(5, *SHAPE), torch.tensor([1, 2, 3, 4, 5])
    attack = TargetedIFGSM(steps=4, checkpoint_every=2, n_samples=2)
    attack_gen, eval_gen = seeded(0), seeded(1)
    targeted_curve(model, x, y, attack, Evaluation(3, eval_gen), generator=attack_gen)
    # gradient passes draw from the attack generator, evaluations from the eval generator
    assert {(id(g), grad) for g, grad in model.calls} == {(id(attack_gen), True),
                                                         (id(eval_gen), False)}
    # each generator advanced exactly as if the other did not exist
    alone = seeded(0)
    traj = attack.trajectory(model.inner, x, y, generator=alone)
    assert torch.equal(attack_gen.get_state(), alone.get_state())
    ev = seeded(1)
    for x_adv in traj.values():
        sample_probs(model.inner, x_adv, 3, generator=ev)
    assert torch.equal(eval_gen.get_state(), ev.get_state())
