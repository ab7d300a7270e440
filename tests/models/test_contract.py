"""The model contract, for every registered model (new models are covered automatically)."""

from __future__ import annotations

import pytest
import torch

from robustbnn.models import MODELS
from robustbnn.types import check_sample_logits
from tests._toys import build

S, B, C = 3, 5, 7


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("name", MODELS.names())
def test_shape_and_finite(name: str) -> None:
    model = build(name, num_classes=C)
    out = model.sample_logits(torch.rand(B, 1, 6, 7), S, generator=_gen(0))
    assert out.shape == (S, B, C)
    assert torch.isfinite(out).all()
    check_sample_logits(out, S, torch.zeros(B, 1), C, name)


@pytest.mark.parametrize("name", MODELS.names())
def test_input_gradient_nonzero(name: str) -> None:
    model = build(name)
    x = torch.rand(B, 1, 6, 7, requires_grad=True)
    model.sample_logits(x, S, generator=_gen(0)).logsumexp(-1).sum().backward()
    assert x.grad is not None and x.grad.abs().sum() > 0


@pytest.mark.parametrize("name", MODELS.names())
def test_generator_reproducible_and_varies(name: str) -> None:
    model = build(name)
    x = torch.rand(B, 1, 6, 7)
    a = model.sample_logits(x, S, generator=_gen(1))
    b = model.sample_logits(x, S, generator=_gen(1))
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    c = model.sample_logits(x, S, generator=_gen(2))
    if MODELS.get(name).stochastic:
        assert not torch.equal(a, c)
        assert not torch.equal(a[0], a[1]), "samples within one call must differ"
    else:
        torch.testing.assert_close(a, c)
        torch.testing.assert_close(a[0], a[1])


@pytest.mark.parametrize("name", MODELS.names())
def test_sampling_leaves_state_unchanged(name: str) -> None:
    model = build(name)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    model.eval()
    model.sample_logits(torch.rand(B, 1, 6, 7), S, generator=_gen(0))
    model.train()
    model.sample_logits(torch.rand(B, 1, 6, 7), S, generator=_gen(0))
    after = model.state_dict()
    assert before.keys() == after.keys()
    for k in before:
        torch.testing.assert_close(before[k], after[k], rtol=0, atol=0)


@pytest.mark.parametrize("name", MODELS.names())
def test_same_in_eval_and_train_mode(name: str) -> None:
    model = build(name)
    x = torch.rand(B, 1, 6, 7)
    model.eval()
    in_eval = model.sample_logits(x, S, generator=_gen(3))
    model.train()
    in_train = model.sample_logits(x, S, generator=_gen(3))
    torch.testing.assert_close(in_eval, in_train, rtol=0, atol=0)
    if MODELS.get(name).stochastic:
        assert not torch.equal(in_eval[0], in_eval[1]), "eval() must not switch sampling off"


def test_check_sample_logits_names_model_and_shapes() -> None:
    with pytest.raises(ValueError, match=r"model 'toy'.*\(3, 5, 7\).*\(5, 3, 7\)"):
        check_sample_logits(torch.zeros(5, 3, 7), 3, torch.zeros(5, 2), 7, "toy")
    with pytest.raises(ValueError, match="NaN or inf"):
        check_sample_logits(torch.full((3, 5, 7), float("nan")), 3, torch.zeros(5, 2), 7, "toy")


# The optional attack samples (robustbnn.types.attack_samples): the same contract as
# sample_logits, for every model (those without attack_logits fall back to sample_logits).
@pytest.mark.parametrize("name", MODELS.names())
def test_attack_samples_shape_gradient_and_generator(name: str) -> None:
    from robustbnn.types import attack_samples

    model = build(name, num_classes=C)
    x = torch.rand(B, 1, 6, 7, requires_grad=True)
    out = attack_samples(model, x, S, _gen(1))
    check_sample_logits(out, S, x, C, name)
    out.logsumexp(-1).sum().backward()
    assert x.grad is not None and x.grad.abs().sum() > 0
    with torch.no_grad():
        again = attack_samples(model, x, S, _gen(1))
        torch.testing.assert_close(out.detach(), again, rtol=0, atol=0)
        if MODELS.get(name).stochastic:
            assert not torch.equal(again, attack_samples(model, x, S, _gen(2)))
            assert not torch.equal(again[0], again[1]), "samples within one call must differ"
