"""Variational hypernetwork (vhn): local reparameterisation, per-example noise, KL, counts."""

from __future__ import annotations

import math

import torch
from torch.distributions import Normal, kl_divergence

from robustbnn.models._matrix_normal import kl_to_standard
from robustbnn.models.vhn import VHNLayer
from tests._helpers import seeded
from tests._toys import build


def _layer(in_dim: int = 4, out_dim: int = 3, hyper_hidden: int = 5) -> VHNLayer:
    """A layer whose hypernet outputs vary with the input and are of order one."""
    layer = VHNLayer(in_dim, out_dim, hyper_hidden, bias=True, mean_init_std=1.0,
                     hyper_init=1e-4, generator=seeded(0))
    g = seeded(1)
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    return layer


def test_local_reparameterisation_matches_explicit_per_example_weights() -> None:
    layer = _layer()
    h = torch.tensor([[0.5, -1.0, 2.0, 0.3], [1.5, 0.2, -0.7, 1.0]])  # (B, in)
    n = 40_000
    with torch.no_grad():
        out, _ = layer(h, n, seeded(2))  # (S, B, c)
        # Explicit: W = diag(d) M0 + diag(√a) E diag(√b), one E per sample and example.
        d, log_a, log_b = layer.posterior(h)  # (B, r), (B, r), (B, c)
        ht = torch.cat([h, torch.ones(2, 1)], 1)
        e = torch.randn(n, 2, 5, 3, generator=seeded(3))
        w = (d[..., None] * layer.mean + (0.5 * log_a).exp()[..., None] * e
             * (0.5 * log_b).exp()[:, None, :])  # (S, B, r, c)
        explicit = torch.einsum("br,sbrc->sbc", ht, w)
    exact_var = (ht.square() * log_a.exp()).sum(-1, keepdim=True) * log_b.exp()  # (B, c)
    assert exact_var.min() > 2.0 or exact_var.max() < 0.5  # a var/std mix-up would show
    se_mean = (exact_var / n).sqrt()
    exact_mean = (ht * d) @ layer.mean
    for draws in (out, explicit):
        assert ((draws.mean(0) - exact_mean).abs() < 4 * se_mean).all()
        torch.testing.assert_close(draws.var(0), exact_var, rtol=0.05, atol=0)
    # Output columns are uncorrelated, as in the explicit construction.
    z = (out - out.mean(0)) / out.std(0)
    corr = torch.einsum("sbi,sbj->bij", z, z) / n
    torch.testing.assert_close(corr, torch.eye(3).expand(2, 3, 3), atol=0.03, rtol=0)


def test_noise_is_drawn_per_example() -> None:
    model = build("vhn")
    x = torch.rand(1, 1, 6, 7).expand(4, 1, 6, 7)
    out = model.sample_logits(x, 3, generator=seeded(0))  # (S, B, C)
    for s in range(3):
        assert not torch.equal(out[s, 0], out[s, 1])  # same input, different weights


def test_layer_kl_is_per_example_matrix_normal_kl() -> None:
    layer = _layer()
    h = torch.randn(3, 4)
    _, kl = layer(h, 2, seeded(0))
    assert kl.shape == (3,)
    d, log_a, log_b = layer.posterior(h)
    mean = d[..., None] * layer.mean  # diag(d) M0, materialised: (B, r, c)
    torch.testing.assert_close(kl, kl_to_standard(mean.square().sum((1, 2)), log_a, log_b))
    std = (log_a[:, :, None] + log_b[:, None, :]).mul(0.5).exp()
    ref = kl_divergence(Normal(mean, std), Normal(0.0, 1.0)).sum((1, 2))
    torch.testing.assert_close(kl, ref, rtol=1e-4, atol=1e-4)


def test_loss_is_mc_predictive_nll_plus_weighted_kl() -> None:
    model = build("vhn", train_samples=3, kl_weight=0.0)
    x, y = torch.rand(5, 1, 6, 7), torch.tensor([0, 1, 2, 3, 6])
    loss = model.loss(x, y, n_train=100, generator=seeded(4))
    logits = model.sample_logits(x, 3, generator=seeded(4))  # the same draws
    log_p = logits.log_softmax(-1)[:, range(5), y]  # (S, B)
    torch.testing.assert_close(loss, -(log_p.logsumexp(0) - math.log(3)).mean())
    weighted = build("vhn", train_samples=3, kl_weight=0.5)
    assert weighted.loss(x, y, n_train=100, generator=seeded(4)) > loss  # KL > 0 added


def test_parameter_count_matches_table_1() -> None:
    # 784-100-10 without primary-net biases, hypernet hidden 30 [Kristiadi 2018, Table 1].
    model = build("vhn", in_shape=(1, 28, 28), num_classes=10, hidden=(100,), hyper_hidden=30,
                  bias=False)
    assert sum(p.numel() for p in model.parameters()) == 164_198


def test_build_from_generator_and_loss_reproducible() -> None:
    a, b, c = build("vhn", seed=0), build("vhn", seed=0), build("vhn", seed=1)
    for va, vb, vc in zip(a.state_dict().values(), b.state_dict().values(),
                          c.state_dict().values(), strict=True):
        torch.testing.assert_close(va, vb, rtol=0, atol=0)
        assert not torch.equal(va, vc)
    x, y = torch.rand(5, 1, 6, 7), torch.tensor([0, 1, 2, 3, 6])
    la = a.loss(x, y, n_train=100, generator=seeded(3))
    torch.testing.assert_close(la, b.loss(x, y, n_train=100, generator=seeded(3)), rtol=0, atol=0)
    la.backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in a.parameters())


def test_log_var_shift_sets_initial_variances() -> None:
    layer = VHNLayer(4, 3, 5, bias=True, mean_init_std=1.0, hyper_init=1e-4,
                     log_var_shift=-3.0, generator=seeded(0))
    _, log_a, log_b = layer.posterior(torch.rand(2, 4))
    bound = 1 / math.sqrt(5) + 1e-3
    assert ((log_a + 3).abs() < bound).all() and ((log_b + 3).abs() < bound).all()
