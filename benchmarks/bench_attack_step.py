"""One FGSM step with an S = 32 Monte Carlo (EOT) gradient on B = 500 inputs.

Run with ``pytest benchmarks/bench_attack_step.py`` (torchattacks, the optional ``attacks``
extra, for the first baselines: ``pip install --no-deps -r requirements/crosscheck.txt``).

Per model (784-400-400-10 at its config defaults; ``mvn`` at its own, 784-100-10), three
baselines run first, in the same session:

* ``torchattacks_eot``: torchattacks ``EOTPGD(steps=1, eot_iter=32, random_start=False)`` on the
  same model, drawing one posterior sample per forward (``PredictiveModule(n_samples=1)``);
* ``torchattacks_nn_dropout`` (``mc_dropout`` only): the same, on the equivalent standard
  PyTorch MLP (``nn.Dropout`` layers with the same weights, kept on through
  ``set_model_training_mode(model_training=True, dropout_training=True)``);
* ``loop``: 32 passes of ``sample_logits(x, 1)``, then the same objective and one backward.

Then ours: ``FGSM(eps, n_samples=32, objective="expected")``, the EOT objective that
torchattacks differentiates (the ``"predictive"`` objective costs the same). Each records
``speedup_vs_<baseline>``.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
from torch import nn

from benchmarks._nets import standard_dropout_mlp
from benchmarks._ratios import measure
from robustbnn.attacks._grad import mc_loss
from robustbnn.attacks.fgsm import FGSM
from robustbnn.attacks.torchattacks_adapter import PredictiveModule
from robustbnn.models import MODELS

S, B, EPS = 32, 500, 0.1
MODEL_NAMES = ("mc_dropout", "bbb_gaussian", "bhn_iaf", "mvn")
HIDDEN = (400, 400)  # 784-400-400-10 (mvn keeps its own 784-100-10)
# The non-default samplers, for the record (defaults: bbb "first", mvn "all", MC dropout's
# attack_masks "per_sample").
VARIANTS = [("bbb_gaussian", "local_reparam", "none"), ("bbb_gaussian", "local_reparam", "all"),
            ("mvn", "local_reparam", "none"), ("mc_dropout", "attack_masks", "per_example")]


def build(name: str, device: torch.device, **changes: object) -> nn.Module:
    """A registry model at its defaults (784-400-400-10 but mvn), on ``device``."""
    spec = MODELS.get(name)
    cfg = spec.config()
    if name != "mvn":
        changes = {"hidden": HIDDEN, **changes}
    cfg = dataclasses.replace(cfg, **changes)
    model = spec.build(cfg, (1, 28, 28), 10, torch.Generator().manual_seed(0))
    model.requires_grad_(False)  # an attack needs input gradients only
    return model.to(device)


def inputs(device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(1)
    x = torch.rand(B, 1, 28, 28, generator=gen)
    return x.to(device), torch.randint(0, 10, (B,), generator=gen).to(device)


def loop_step(model: nn.Module, x: torch.Tensor, y: torch.Tensor,
              gen: torch.Generator) -> torch.Tensor:
    """The step as a loop of S single-sample passes, then one backward."""
    x = x.detach().requires_grad_(True)
    logits = torch.cat([model.sample_logits(x, 1, generator=gen) for _ in range(S)])
    (grad,) = torch.autograd.grad(mc_loss(logits, y, "expected"), x)
    return (x + EPS * grad.sign()).clamp(0, 1).detach()


def _torchattacks():  # noqa: ANN202
    return pytest.importorskip("torchattacks", reason="baseline needs the 'attacks' extra")


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_torchattacks_eot_same_model(benchmark: object, name: str,
                                     device: torch.device) -> None:
    torchattacks = _torchattacks()
    net = PredictiveModule(build(name, device), 1,
                           generator=torch.Generator(device).manual_seed(2))
    attack = torchattacks.EOTPGD(net, eps=EPS, alpha=EPS, steps=1, eot_iter=S,
                                 random_start=False)
    measure(benchmark, f"attack_step[{name}]", "torchattacks_eot", attack, *inputs(device),
            baseline=True, device=device)


def test_torchattacks_eot_nn_dropout(benchmark: object, device: torch.device) -> None:
    torchattacks = _torchattacks()
    net = standard_dropout_mlp(build("mc_dropout", device))
    attack = torchattacks.EOTPGD(net, eps=EPS, alpha=EPS, steps=1, eot_iter=S,
                                 random_start=False)
    attack.set_model_training_mode(model_training=True, dropout_training=True)
    measure(benchmark, "attack_step[mc_dropout]", "torchattacks_nn_dropout", attack,
            *inputs(device), baseline=True, device=device)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_loop_of_single_samples(benchmark: object, name: str, device: torch.device) -> None:
    model = build(name, device)
    measure(benchmark, f"attack_step[{name}]", "loop", loop_step, model, *inputs(device),
            torch.Generator(device).manual_seed(2), baseline=True, device=device)


def _ours(name: str, device: torch.device, **changes: object) -> list[object]:
    model = build(name, device, **changes)
    attack = FGSM(eps=EPS, n_samples=S, objective="expected")
    gen = torch.Generator(device).manual_seed(2)

    def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return attack(model, x, y, generator=gen)

    return [step, *inputs(device)]


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_robustbnn_fgsm_step(benchmark: object, name: str, device: torch.device) -> None:
    measure(benchmark, f"attack_step[{name}]", "robustbnn", *_ours(name, device),
            device=device)


@pytest.mark.parametrize(("name", "field", "value"), VARIANTS)
def test_robustbnn_fgsm_step_other_sampler(benchmark: object, name: str, field: str,
                                           value: object, device: torch.device) -> None:
    """A non-default sampler (weight draws / local reparameterisation), for the record."""
    measure(benchmark, f"attack_step[{name}]", f"robustbnn_{field}={value}",
            *_ours(name, device, **{field: value}), device=device)
