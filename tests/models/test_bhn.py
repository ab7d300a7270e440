"""Bayesian hypernetworks: the posterior family, the ELBO terms, the primary nets, clipping."""

from __future__ import annotations

import dataclasses

import pytest
import scipy.stats
import torch
import torch.nn.functional as F

from robustbnn.config import TrainConfig
from robustbnn.data.types import DataBundle, Split
from robustbnn.models import MODELS
from robustbnn.models.bhn import clipped_nll, gaussian_log_prior
from robustbnn.training.fit import fit
from tests._helpers import seeded
from tests._toys import LinearModel, build

BHN = ["bhn_iaf", "bhn_realnvp"]
ALL = [*BHN, "bhn_full"]
B = 5


def _x(seed: int = 0, n: int = B) -> torch.Tensor:
    return torch.rand(n, 1, 6, 7, generator=seeded(seed))


@torch.no_grad()
def _randomise_(model: torch.nn.Module, scale: float = 0.3, seed: int = 7) -> None:
    g = seeded(seed)
    for p in model.hypernet.parameters():
        p.copy_(scale * torch.randn(p.shape, generator=g))


@torch.no_grad()
def _set_factorial_(model: torch.nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
    """Give the LinearFlow a non-trivial mean and scale; return (mean, std)."""
    lin = model.hypernet.linear
    lin.shift.copy_(torch.randn(lin.shift.shape, generator=seeded(11)))
    lin.log_scale.copy_(-1.0 + 0.5 * torch.randn(lin.log_scale.shape, generator=seeded(12)))
    return lin.shift.clone(), lin.scale().clone()


@pytest.mark.parametrize("name", ALL)
def test_zero_coupling_is_a_factorial_gaussian(name: str) -> None:
    model = build(name, coupling=0, hidden=(3,))
    mean, std = _set_factorial_(model)
    n = 40_000
    with torch.no_grad():
        theta, log_q = model.hypernet.rsample(n, generator=seeded(1), device="cpu",
                                              dtype=torch.float32)
    assert theta.shape == (n, model.hypernet.dim)
    torch.testing.assert_close(theta.mean(0), mean, rtol=0, atol=(5 * std / n**0.5).max().item())
    torch.testing.assert_close(theta.std(0), std, rtol=5 / (2 * n) ** 0.5, atol=0)
    reference = torch.distributions.Normal(mean, std).log_prob(theta).sum(-1)
    torch.testing.assert_close(log_q, reference, rtol=1e-5, atol=1e-3)


@pytest.mark.parametrize("name", ALL)
def test_kl_estimate_matches_the_closed_form_gaussian_kl(name: str) -> None:
    prior_std = 0.5
    model = build(name, coupling=0, hidden=(3,), prior_std=prior_std)
    mean, std = _set_factorial_(model)
    with torch.no_grad():
        theta, log_q = model.hypernet.rsample(40_000, generator=seeded(2), device="cpu",
                                              dtype=torch.float32)
        kl = (log_q - gaussian_log_prior(theta, prior_std)).double()
    closed = (torch.log(prior_std / std) + (std**2 + mean**2) / (2 * prior_std**2) - 0.5).sum()
    assert abs(kl.mean() - closed) < 5 * kl.std() / len(kl) ** 0.5
    # The loss uses exactly this estimator, at one draw per minibatch.
    x, y = _x(), torch.randint(0, 7, (B,), generator=seeded(3))
    with torch.no_grad():
        _, kl_loss = model.elbo_terms(x, y, generator=seeded(4))
        theta1, log_q1 = model.hypernet.rsample(1, generator=seeded(4), device="cpu",
                                                dtype=torch.float32)
    torch.testing.assert_close(kl_loss, (log_q1 - gaussian_log_prior(theta1, prior_std))[0])


@pytest.mark.parametrize("name", BHN)
def test_kl_estimate_with_flows_matches_a_change_of_variables_reference(name: str) -> None:
    model = build(name, coupling=2, flow_hidden=8, hidden=(3,), num_classes=3,
                  prior_std=0.7, data_init=False).double()
    _randomise_(model)
    x, y = _x().double(), torch.tensor([0, 1, 2, 0, 1])
    dim = model.hypernet.dim
    for seed in range(3):
        with torch.no_grad():
            _, kl = model.elbo_terms(x, y, generator=seeded(seed))
        eps = torch.randn(1, dim, generator=seeded(seed), dtype=torch.float64)[0]
        theta = model.hypernet(eps)[0]
        jac = torch.autograd.functional.jacobian(lambda e: model.hypernet(e)[0], eps)
        log_q = scipy.stats.norm.logpdf(eps.numpy()).sum() - torch.linalg.slogdet(jac)[1].item()
        log_p = scipy.stats.norm.logpdf(theta.detach().numpy(), scale=0.7).sum()
        assert kl.item() == pytest.approx(log_q - log_p, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("name", ALL)
def test_loss_is_clipped_nll_plus_kl_over_n_train(name: str) -> None:
    changes = {"data_init": False} if name in BHN else {}
    model = build(name, **changes)
    _randomise_(model, scale=0.05)
    x, y = _x(), torch.randint(0, 7, (B,), generator=seeded(3))
    loss = model.loss(x, y, n_train=250, generator=seeded(5))
    theta, log_q = model.hypernet.rsample(1, generator=seeded(5), device="cpu",
                                          dtype=torch.float32)
    probs = model.primary_logits(x, theta)[0].softmax(-1)[range(B), y].clamp(0.001, 0.999)
    kl = log_q[0] - gaussian_log_prior(theta, model.prior_std)[0]
    torch.testing.assert_close(loss, -probs.log().mean() + kl / 250)


def test_clipped_nll_clamps_probabilities_and_their_gradient() -> None:
    logits = torch.tensor([[0.0, 0.0, 0.0], [20.0, 0.0, 0.0], [-20.0, 0.0, 0.0]],
                          requires_grad=True)
    y = torch.zeros(3, dtype=torch.long)
    loss = clipped_nll(logits, y, 0.001)
    expected = -(torch.tensor([1 / 3, 0.999, 0.001]).log()).mean()
    torch.testing.assert_close(loss, expected)
    loss.backward()
    assert logits.grad[0].abs().sum() > 0
    assert (logits.grad[1:] == 0).all(), "outside (0.001, 0.999) the clip stops the gradient"
    torch.testing.assert_close(clipped_nll(logits, y, 0.0), F.cross_entropy(logits, y))


def test_sample_logits_are_unclipped() -> None:
    model = build("bhn_iaf", coupling=0)
    with torch.no_grad():
        model.hypernet.linear.shift.fill_(30.0)
    probs = model.sample_logits(_x(), 2, generator=seeded(0)).softmax(-1)
    assert probs.max() > 0.9999 and probs.min() < 1e-4


@pytest.mark.parametrize("name", BHN)
def test_weight_norm_primary_matches_explicit_weights(name: str) -> None:
    model = build(name, coupling=2)
    _randomise_(model, scale=0.2)
    x, s = _x(), 3
    g, _ = model.hypernet.rsample(s, generator=seeded(6), device="cpu", dtype=torch.float32)
    out = model.sample_logits(x, s, generator=seeded(6))
    assert out.shape == (s, B, 7)
    net = model.primary
    for i in range(s):
        h = x.flatten(1)
        scales = g[i].split(net.out_sizes)
        for layer, (v, b) in enumerate(zip(net.directions, net.biases, strict=True)):
            w = scales[layer][:, None] * v / v.norm(dim=1, keepdim=True)  # θ_j = g_j v_j/‖v_j‖
            h = F.linear(h, w, b)
            if layer < len(net.out_sizes) - 1:
                h = F.relu(h)
        torch.testing.assert_close(out[i], h)


def test_full_primary_matches_explicit_weights() -> None:
    model = build("bhn_full", hidden=(4, 3))
    _randomise_(model, scale=0.2)
    x, s = _x(), 3
    theta, _ = model.hypernet.rsample(s, generator=seeded(6), device="cpu", dtype=torch.float32)
    out = model.sample_logits(x, s, generator=seeded(6))
    assert out.shape == (s, B, 7)
    assert model.hypernet.dim == 42 * 4 + 4 + 4 * 3 + 3 + 3 * 7 + 7
    for i in range(s):
        h, offset = x.flatten(1), 0
        for layer, (n_in, n_out) in enumerate([(42, 4), (4, 3), (3, 7)]):
            w = theta[i, offset : offset + n_in * n_out].view(n_out, n_in)
            offset += n_in * n_out
            b = theta[i, offset : offset + n_out]
            offset += n_out
            h = F.linear(h, w, b)
            if layer < 2:
                h = F.relu(h)
        torch.testing.assert_close(out[i], h)


@pytest.mark.parametrize(("coupling", "tol"), [(0, 1e-4), (8, 0.05)])
def test_data_init_standardises_every_unit_once(coupling: int, tol: float) -> None:
    # RealNVP permutes coordinates between couplings: the init must follow the permutations.
    model = build("bhn_realnvp", coupling=coupling)
    x = _x(1, n=64)
    y = torch.randint(0, 7, (64,), generator=seeded(2))
    assert bool(model.needs_init)
    model.loss(x, y, n_train=100, generator=seeded(0))
    assert not bool(model.needs_init)
    with torch.no_grad():
        g = model.hypernet(torch.zeros(1, model.hypernet.dim))[0][0]  # the flow at ε = 0
    net, h = model.primary, x.flatten(1)
    for v, b, gl in zip(net.unit_directions(), net.biases, g.split(net.out_sizes),
                        strict=True):
        pre = (h @ v.T) * gl + b
        torch.testing.assert_close(pre.mean(0), torch.zeros(len(b)), rtol=0, atol=tol)
        torch.testing.assert_close(pre.std(0, correction=0), torch.ones(len(b)), rtol=tol,
                                   atol=1e-3)
        h = F.relu(pre)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    model.loss(x[:8], y[:8], n_train=100, generator=seeded(0))
    for k, v in model.state_dict().items():
        torch.testing.assert_close(v, before[k], rtol=0, atol=0)


@pytest.mark.parametrize("name", ALL)
def test_loss_gradient_reaches_every_parameter(name: str) -> None:
    model = build(name, coupling=2)
    model.loss(_x(), torch.arange(B), n_train=100, generator=seeded(0)).backward()
    for key, p in model.named_parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all(), key
        assert p.grad.abs().sum() > 0, key


@pytest.mark.parametrize("name", ALL)
def test_build_and_loss_are_reproducible_under_the_generator(name: str) -> None:
    a, b, c = build(name, seed=0), build(name, seed=0), build(name, seed=1)
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    for k in sa:
        torch.testing.assert_close(sa[k], sb[k], rtol=0, atol=0)
    assert any(not torch.equal(sa[k], sc[k]) for k in sa)
    x, y = _x(), torch.arange(B)
    la = a.loss(x, y, n_train=100, generator=seeded(3))
    lb = b.loss(x, y, n_train=100, generator=seeded(3))
    torch.testing.assert_close(la, lb, rtol=0, atol=0)


def test_made_masks_survive_a_state_dict_round_trip() -> None:
    a, b = build("bhn_iaf", seed=0), build("bhn_iaf", seed=1)
    b.load_state_dict(a.state_dict())
    x = _x()
    torch.testing.assert_close(a.sample_logits(x, 2, generator=seeded(0)),
                               b.sample_logits(x, 2, generator=seeded(0)), rtol=0, atol=0)


def test_paper_defaults() -> None:
    iaf = MODELS.get("bhn_iaf").config()
    assert (iaf.coupling, iaf.flow_hidden, iaf.batch_size, iaf.lr) == (8, 200, 128, 1e-3)
    assert (iaf.grad_clip_norm, iaf.grad_clip_value, iaf.prob_clip) == (10.0, 5.0, 0.001)
    assert MODELS.get("bhn_realnvp").config() == iaf
    full = MODELS.get("bhn_full").config()
    assert full.hidden == (50,) and full.grad_clip_value == 5.0


class _HugeGradient(LinearModel):
    def loss(self, x: torch.Tensor, y: torch.Tensor, *, n_train: int,
             generator: torch.Generator | None = None,
             batch: tuple[int, int] = (0, 1)) -> torch.Tensor:
        return 100.0 * (self.weight.sum() + 3.0 * self.bias.sum())


def test_fit_clips_gradients_elementwise_after_the_norm() -> None:
    x = torch.rand(4, 1, 2, 2)
    split = Split(x, torch.tensor([0, 1, 0, 1]))
    data = DataBundle("toy", split, split, split, 2, "0", "test")
    cfg = TrainConfig(epochs=1, batch_size=4, optimizer="sgd", lr=1.0, grad_clip_value=0.5,
                      val_samples=1)  # a deterministic model validates with one sample
    model = _HugeGradient(torch.zeros(4, 2), torch.zeros(2))
    fit(model, cfg, data, name="toy", progress=False)
    torch.testing.assert_close(model.weight, torch.full((4, 2), -0.5))
    torch.testing.assert_close(model.bias, torch.full((2,), -0.5))
    # Norm first (to 1), then the value clip: 300/‖grad‖ < 0.5 for the bias entries.
    cfg = dataclasses.replace(cfg, grad_clip_norm=1.0)
    model = _HugeGradient(torch.zeros(4, 2), torch.zeros(2))
    fit(model, cfg, data, name="toy", progress=False)
    norm = (8 * 100.0**2 + 2 * 300.0**2) ** 0.5
    torch.testing.assert_close(model.weight, torch.full((4, 2), -100.0 / norm))
    torch.testing.assert_close(model.bias, torch.full((2,), -min(0.5, 300.0 / norm)))
