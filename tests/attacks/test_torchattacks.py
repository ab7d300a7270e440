"""The torchattacks adapter: torchattacks' FGSM on our models equals ours.

torchattacks is a cross-check oracle installed by the README test command with
``pip install --no-deps -r requirements/crosscheck.txt``; robustbnn never imports it.
"""

from __future__ import annotations

import math

import pytest
import torch

from robustbnn.attacks import FGSM
from robustbnn.attacks.torchattacks_adapter import PredictiveModule
from robustbnn.models import MODELS

torchattacks = pytest.importorskip(
    "torchattacks", reason="install the cross-check oracles: "
    "pip install --no-deps -r requirements/crosscheck.txt")


def _model(name: str, hidden=(13, 11)):
    spec = MODELS.get(name)
    cfg = spec.config()
    cfg = type(cfg)(**{**cfg.__dict__, "hidden": hidden})
    return spec.build(cfg, (1, 28, 28), 10, torch.Generator().manual_seed(0))


def _data(n: int = 6):
    g = torch.Generator().manual_seed(1)
    return torch.rand(n, 1, 28, 28, generator=g), torch.randint(0, 10, (n,), generator=g)


@pytest.mark.parametrize("eps", [0.05, 0.3])
def test_torchattacks_fgsm_equals_ours_on_the_deterministic_mlp(eps: float) -> None:
    model = _model("mlp")
    x, y = _data()
    ours = FGSM(eps=eps, n_samples=1)(model, x, y)
    theirs = torchattacks.FGSM(PredictiveModule(model), eps=eps)(x, y)
    assert theirs.shape == ours.shape == x.shape
    assert torch.equal(theirs, ours)
    assert (theirs - x).abs().amax() <= eps + 1e-6 and not torch.equal(theirs, x)


def test_forward_is_the_log_mc_predictive_and_keeps_sampling_after_eval() -> None:
    model = _model("mc_dropout")
    x, _ = _data(4)
    net = PredictiveModule(model, n_samples=5, generator=torch.Generator().manual_seed(3))
    net.eval()  # what torchattacks does before attacking
    out = net(x)
    logits = model.attack_logits(x, 5, generator=torch.Generator().manual_seed(3))  # attacked
    assert out.shape == (4, 10)
    torch.testing.assert_close(out.exp(), logits.softmax(-1).mean(0))
    assert not torch.equal(net(x), out)  # fresh samples each forward: dropout stays on
    assert math.isclose(out.exp().sum(-1).mean().item(), 1.0, rel_tol=1e-5)


def test_torchattacks_fgsm_matches_ours_on_mc_dropout_with_the_same_samples() -> None:
    model = _model("mc_dropout")
    x, y = _data()
    ours = FGSM(eps=0.1, n_samples=8)(model, x, y, generator=torch.Generator().manual_seed(4))
    net = PredictiveModule(model, n_samples=8, generator=torch.Generator().manual_seed(4))
    theirs = torchattacks.FGSM(net, eps=0.1)(x, y)
    assert torch.equal(theirs, ours)


@pytest.mark.parametrize("mode", [True, False])
def test_torchattacks_never_switches_the_wrapped_models_mode(mode: bool) -> None:
    model = _model("mc_dropout")
    model.train(mode)
    x, y = _data()
    net = PredictiveModule(model, n_samples=4, generator=torch.Generator().manual_seed(4))
    seen = []
    net.register_forward_pre_hook(lambda module, args: seen.append(model.training))
    torchattacks.FGSM(net, eps=0.1)(x, y)  # calls net.eval() before attacking
    net.eval()
    assert seen == [mode] and model.training is mode
    assert all(m.training is mode for m in model.modules())


def test_rejects_zero_samples() -> None:
    with pytest.raises(ValueError, match="n_samples must be >= 1, got 0"):
        PredictiveModule(_model("mlp"), n_samples=0)
