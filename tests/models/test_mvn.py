"""Matrix-variate Gaussian VI (mvn) and the matrix-normal KL shared with vhn."""

from __future__ import annotations

import torch
from torch.distributions import MultivariateNormal, Normal, kl_divergence

from robustbnn.models._matrix_normal import kl_to_standard
from robustbnn.models.mvn import MVNLayer
from tests._helpers import seeded
from tests._toys import build


def _random_mn(r: int = 3, c: int = 4, seed: int = 0):
    g = seeded(seed)
    mean = torch.randn(r, c, generator=g, dtype=torch.float64)
    log_a = torch.randn(r, generator=g, dtype=torch.float64) * 0.7
    log_b = torch.randn(c, generator=g, dtype=torch.float64) * 0.7 - 0.5
    return mean, log_a, log_b


def _vec_gaussian(mean, log_a, log_b) -> MultivariateNormal:
    """MN(M, diag a, diag b) as N(vec M, diag(b) ⊗ diag(a)), vec stacking the columns."""
    cov = torch.kron(torch.diag(log_b.exp()), torch.diag(log_a.exp()))
    return MultivariateNormal(mean.T.reshape(-1), covariance_matrix=cov)


def test_kl_matches_torch_gaussian_kl() -> None:
    mean, log_a, log_b = _random_mn()
    closed = kl_to_standard(mean.square().sum(), log_a, log_b)
    q = _vec_gaussian(mean, log_a, log_b)
    n = mean.numel()
    p = MultivariateNormal(torch.zeros(n, dtype=torch.float64),
                           covariance_matrix=torch.eye(n, dtype=torch.float64))
    torch.testing.assert_close(closed, kl_divergence(q, p))
    # The same as a factorised Gaussian with entry variances a_i b_j.
    std = (log_a[:, None] + log_b[None, :]).mul(0.5).exp()
    diag = kl_divergence(Normal(mean, std), Normal(0.0, 1.0)).sum()
    torch.testing.assert_close(closed, diag)


def test_kl_matches_monte_carlo() -> None:
    mean, log_a, log_b = _random_mn(seed=1)
    closed = kl_to_standard(mean.square().sum(), log_a, log_b)
    q = _vec_gaussian(mean, log_a, log_b)
    torch.manual_seed(0)
    w = q.sample((200_000,))
    log_ratio = q.log_prob(w) - Normal(0.0, 1.0).log_prob(w).sum(-1)
    se = log_ratio.std() / len(log_ratio) ** 0.5
    assert se < 0.02 * closed  # so a factor-2 (or a missing term) error cannot pass
    assert abs(log_ratio.mean() - closed) < 4 * se


def test_kl_batched_over_leading_axes() -> None:
    mean, log_a, log_b = _random_mn()
    one = kl_to_standard(mean.square().sum(), log_a, log_b)
    many = kl_to_standard(mean.square().sum().expand(2, 5), log_a.expand(2, 5, -1),
                          log_b.expand(2, 5, -1))
    assert many.shape == (2, 5)
    torch.testing.assert_close(many, one.expand(2, 5))


def _layer(in_dim: int = 4, out_dim: int = 3, seed: int = 0) -> MVNLayer:
    layer = MVNLayer(in_dim, out_dim, bias=True, log_var_init=-1.0, generator=seeded(seed))
    with torch.no_grad():
        g = seeded(seed + 100)
        layer.log_a.add_(torch.randn(layer.log_a.shape, generator=g) * 0.5)
        layer.log_b.add_(torch.randn(layer.log_b.shape, generator=g) * 0.5)
    return layer


def test_weight_samples_have_matrix_normal_moments() -> None:
    layer = _layer()
    with torch.no_grad():
        w = layer.sample_weight(40_000, seeded(0))  # (S, r, c)
        var = torch.outer(layer.log_a.exp(), layer.log_b.exp())
    assert w.shape == (40_000, 5, 3)
    torch.testing.assert_close(w.mean(0), layer.mean.detach(), atol=4 * var.max().sqrt() / 200,
                               rtol=0)
    torch.testing.assert_close(w.var(0), var, rtol=0.05, atol=0)


def test_forward_is_a_matmul_with_the_sampled_weights() -> None:
    layer = _layer()
    h = torch.randn(6, 4)
    out, kl = layer(h, 3, seeded(7))
    w = layer.sample_weight(3, seeded(7))  # the same draws
    explicit = torch.cat([h, torch.ones(6, 1)], 1) @ w  # (S, B, c)
    assert out.shape == (3, 6, 3)
    torch.testing.assert_close(out, explicit, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(
        kl, kl_to_standard(layer.mean.square().sum(), layer.log_a, layer.log_b))
    # Each sample's weights act on the whole batch (and on hidden inputs with a sample axis).
    out2, _ = layer(h.expand(3, 6, 4), 3, seeded(7))
    torch.testing.assert_close(out2, explicit, rtol=1e-5, atol=1e-5)


def test_weights_are_shared_across_the_batch_without_local_reparam() -> None:
    model = build("mvn", local_reparam="none")
    x = torch.rand(1, 1, 6, 7).expand(4, 1, 6, 7)
    out = model.sample_logits(x, 3, generator=seeded(0))  # (S, B, C)
    torch.testing.assert_close(out, out[:, :1].expand_as(out))
    assert not torch.equal(out[0], out[1])


def test_local_reparam_draws_each_example_independently() -> None:
    model = build("mvn")
    assert model.local_reparam == "all"  # the default: measured faster (benchmarks/README.md)
    x = torch.rand(1, 1, 6, 7).expand(4, 1, 6, 7)
    out = model.sample_logits(x, 3, generator=seeded(0))  # (S, B, C)
    assert out.shape == (3, 4, 7)
    assert not torch.equal(out[:, 0], out[:, 1])  # identical inputs, own draws


def test_parameter_count_matches_table_1() -> None:
    # 784-100-10 without biases [Kristiadi 2018, Table 1]: M, a, b per layer.
    model = build("mvn", in_shape=(1, 28, 28), num_classes=10, hidden=(100,), bias=False)
    assert sum(p.numel() for p in model.parameters()) == 80_394


def test_build_from_generator_and_loss_reproducible() -> None:
    a, b, c = build("mvn", seed=0), build("mvn", seed=0), build("mvn", seed=1)
    for (k, va), vb, vc in zip(a.state_dict().items(), b.state_dict().values(),
                               c.state_dict().values(), strict=True):
        torch.testing.assert_close(va, vb, rtol=0, atol=0)
        if k.endswith("mean"):
            assert not torch.equal(va, vc)
    x, y = torch.rand(5, 1, 6, 7), torch.tensor([0, 1, 2, 3, 6])
    la = a.loss(x, y, n_train=100, generator=seeded(3))
    lb = b.loss(x, y, n_train=100, generator=seeded(3))
    torch.testing.assert_close(la, lb, rtol=0, atol=0)
    la.backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in a.parameters())
