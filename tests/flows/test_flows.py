"""Flows: log-dets against autograd Jacobians, MADE autoregressiveness, reproducibility."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from robustbnn.errors import ConfigError
from robustbnn.flows import (
    MADE,
    AffineCoupling,
    Hypernet,
    IAFStep,
    LinearFlow,
    Permutation,
    build_flow,
    made_masks,
)
from robustbnn.flows.made import MaskedWNLinear
from tests._helpers import seeded

D = 6


@torch.no_grad()
def _randomise_(module: nn.Module, scale: float = 0.5, seed: int = 0) -> nn.Module:
    """Replace every parameter by N(0, scale²) draws: far from the near-identity init."""
    g = seeded(seed)
    for p in module.parameters():
        p.copy_(scale * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return module


def _jacobian_logdet(flow: nn.Module, z: torch.Tensor) -> torch.Tensor:
    jac = torch.autograd.functional.jacobian(lambda v: flow(v)[0], z.double())
    return torch.linalg.slogdet(jac)[1]


def _check_logdet(flow: nn.Module, dim: int = D) -> None:
    flow = flow.double()
    z = torch.randn(4, dim, generator=seeded(5), dtype=torch.float64)
    out, logdet = flow(z)
    assert out.shape == z.shape and logdet.shape == (4,)
    for i in range(4):
        torch.testing.assert_close(logdet[i], _jacobian_logdet(flow, z[i]))
    # Not a trivially near-identity map: the log-det is far from 0 and varies with z.
    assert logdet.abs().max() > 0.1
    assert logdet.std() > 1e-3 or isinstance(flow, LinearFlow)


def test_linear_flow_logdet_matches_jacobian() -> None:
    _check_logdet(_randomise_(LinearFlow(D, generator=seeded(0))))


def test_iaf_step_logdet_matches_jacobian() -> None:
    _check_logdet(_randomise_(IAFStep(D, 16, generator=seeded(0))))


@pytest.mark.parametrize("weight_norm", [False, True])
@pytest.mark.parametrize("dim", [D, D + 1])
def test_affine_coupling_logdet_matches_jacobian(dim: int, weight_norm: bool) -> None:
    coupling = AffineCoupling(dim, 16, weight_norm=weight_norm, generator=seeded(0))
    _check_logdet(_randomise_(coupling), dim)


def test_weight_normed_coupling_columns_have_norm_gain() -> None:
    coupling = _randomise_(AffineCoupling(D, 16, weight_norm=True, generator=seeded(0)))
    z = torch.randn(3, D)
    z1 = z[:, : D // 2]
    w = coupling.w_in / coupling.w_in.norm(dim=0) * coupling.gains[0]  # W_j = r_j u_j/‖u_j‖
    torch.testing.assert_close(coupling._linear(z1, coupling.w_in, coupling.b_in, 0),
                               z1 @ w + coupling.b_in)


@pytest.mark.parametrize("kind", ["iaf", "realnvp"])
def test_chain_logdet_matches_jacobian(kind: str) -> None:
    _check_logdet(_randomise_(build_flow(kind, D, 3, 16, generator=seeded(0)), scale=0.3))
    flow = build_flow(kind, D, 3, 16, coupling_weight_norm=True, generator=seeded(0))
    _check_logdet(_randomise_(flow, scale=0.3))


def test_empty_chain_is_identity() -> None:
    z = torch.randn(3, D)
    out, logdet = build_flow("iaf", D, 0, generator=seeded(0))(z)
    torch.testing.assert_close(out, z)
    torch.testing.assert_close(logdet, torch.zeros(3))


def test_unknown_flow_or_negative_steps_raise() -> None:
    with pytest.raises(ConfigError, match="unknown flow 'maf'.*iaf.*realnvp"):
        build_flow("maf", D, 2)
    with pytest.raises(ConfigError, match=">= 0"):
        build_flow("iaf", D, -1)


def test_flows_take_extra_batch_axes() -> None:
    z = torch.randn(3, 5, D)
    for kind in ("iaf", "realnvp"):
        flow = _randomise_(build_flow(kind, D, 2, 8, generator=seeded(0)))
        out, logdet = flow(z)
        assert out.shape == (3, 5, D) and logdet.shape == (3, 5)
        flat, flat_logdet = flow(z.reshape(15, D))
        torch.testing.assert_close(out.reshape(15, D), flat)
        torch.testing.assert_close(logdet.reshape(15), flat_logdet)


def test_made_mask_product_is_strictly_triangular_under_the_ordering() -> None:
    made = MADE(D, 32, generator=seeded(0))
    to_hidden, to_output = made.masks()
    assert to_hidden.shape == (32, D) and to_output.shape == (D, 32)
    paths = to_output.long() @ to_hidden.long()  # (D, D): paths from input d' to output d
    order = made.in_degrees.argsort()  # coordinates sorted by degree
    reordered = paths[order][:, order]
    assert torch.equal(reordered, reordered.tril(-1)), "output d must see only lower degrees"
    # With 32 hidden units every hidden degree 1..D-1 occurs, so every allowed path exists.
    below = torch.ones(D, D, dtype=torch.bool).tril(-1)
    assert (reordered[below] > 0).all()


def test_made_masks_match_the_degree_rule() -> None:
    inputs = torch.tensor([3, 1, 2])
    hiddens = torch.tensor([1, 2, 2, 1])
    to_hidden, to_output = made_masks(inputs, hiddens)
    expected_hidden = torch.tensor([[0, 1, 0], [0, 1, 1], [0, 1, 1], [0, 1, 0]], dtype=torch.bool)
    expected_output = torch.tensor([[1, 1, 1, 1], [0, 0, 0, 0], [1, 0, 0, 1]], dtype=torch.bool)
    assert torch.equal(to_hidden, expected_hidden)
    assert torch.equal(to_output, expected_output)


def test_made_jacobian_is_strictly_triangular_by_autograd() -> None:
    made = _randomise_(MADE(D, 32, generator=seeded(1))).double()
    z = torch.randn(D, generator=seeded(2), dtype=torch.float64)
    order = made.in_degrees.argsort()
    for head in range(2):
        jac = torch.autograd.functional.jacobian(lambda v, h=head: made(v)[h], z)  # (D, D)
        reordered = jac[order][:, order]
        torch.testing.assert_close(reordered, reordered.tril(-1), rtol=0, atol=0)
        assert (reordered.tril(-1).abs() > 1e-6).sum() >= D, "lower triangle must be used"


def test_iaf_jacobian_is_triangular_with_sigma_on_the_diagonal() -> None:
    step = _randomise_(IAFStep(D, 32, generator=seeded(1))).double()
    z = torch.randn(D, generator=seeded(2), dtype=torch.float64)
    jac = torch.autograd.functional.jacobian(lambda v: step(v)[0], z)
    order = step.made.in_degrees.argsort()
    reordered = jac[order][:, order]
    torch.testing.assert_close(reordered, reordered.tril(), rtol=0, atol=0)
    sigma = step.made(z)[1].exp() + 0.001
    torch.testing.assert_close(jac.diagonal(), sigma)


def test_masked_wn_linear_rows_have_norm_gain_and_empty_rows_are_zero() -> None:
    layer = _randomise_(MaskedWNLinear(5, 4, generator=seeded(0)))
    mask = torch.ones(4, 5, dtype=torch.bool)
    mask[1] = False
    mask[2, :3] = False
    w = layer.weight(mask)
    assert torch.equal(w == 0, ~mask)
    norms = w.norm(dim=1)
    torch.testing.assert_close(norms[[0, 2, 3]], layer.gain.abs()[[0, 2, 3]])
    x = torch.randn(3, 5)
    out = layer(x, mask.float())
    torch.testing.assert_close(out, x @ w.T + layer.bias)
    out.sum().backward()
    assert all(torch.isfinite(p.grad).all() for p in layer.parameters())
    assert (layer.direction.grad[~mask] == 0).all()
    assert (layer.direction.grad[mask] != 0).all()


def test_output_index_follows_the_permutations() -> None:
    flow = build_flow("realnvp", D, 4, 8, generator=seeded(0))  # 3 permutations
    z = torch.randn(2, D)
    index = flow.output_index(D)
    out = z
    for layer in flow.layers:
        if isinstance(layer, Permutation):
            out = layer(out)[0]
    torch.testing.assert_close(out, z[:, index])
    torch.testing.assert_close(flow(z)[0], z[:, index], rtol=0, atol=0.05)  # near identity
    torch.testing.assert_close(build_flow("iaf", D, 2, generator=seeded(0)).output_index(D),
                               torch.arange(D))


def test_permutation_is_not_identity_and_has_zero_logdet() -> None:
    perm = Permutation(D, generator=seeded(0))
    assert sorted(perm.perm.tolist()) == list(range(D))
    assert not torch.equal(perm.perm, torch.arange(D))
    z = torch.randn(2, D)
    out, logdet = perm(z)
    torch.testing.assert_close(out, z[:, perm.perm])
    torch.testing.assert_close(logdet, torch.zeros(2))


@pytest.mark.parametrize("linear_last", [False, True])
def test_hypernet_log_q_is_the_change_of_variables_density(linear_last: bool) -> None:
    for kind in ("iaf", "realnvp"):
        net = Hypernet(D, kind, 2, 8, linear_last=linear_last, generator=seeded(0))
        net = _randomise_(net, scale=0.3).double()
        eps = torch.randn(3, D, generator=seeded(4), dtype=torch.float64)
        theta, log_q = net(eps)
        for i in range(3):
            jac = torch.autograd.functional.jacobian(lambda v, net=net: net(v)[0], eps[i])
            log_noise = -0.5 * eps[i].square().sum() - 0.5 * D * math.log(2 * math.pi)
            torch.testing.assert_close(log_q[i], log_noise - torch.linalg.slogdet(jac)[1])


def test_hypernet_rsample_is_reproducible_under_the_generator() -> None:
    net = Hypernet(D, "iaf", 2, 8, generator=seeded(0))
    a = net.rsample(4, generator=seeded(1), device="cpu", dtype=torch.float32)
    b = net.rsample(4, generator=seeded(1), device="cpu", dtype=torch.float32)
    c = net.rsample(4, generator=seeded(2), device="cpu", dtype=torch.float32)
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    assert not torch.equal(a[0], c[0])
    assert a[0].shape == (4, D) and a[1].shape == (4,)


@pytest.mark.parametrize("kind", ["iaf", "realnvp"])
def test_construction_is_reproducible_under_the_generator(kind: str) -> None:
    a = build_flow(kind, D, 3, 8, generator=seeded(0)).state_dict()
    b = build_flow(kind, D, 3, 8, generator=seeded(0)).state_dict()
    c = build_flow(kind, D, 3, 8, generator=seeded(1)).state_dict()
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=0)
    assert any(not torch.equal(a[k], c[k]) for k in a)


def test_iaf_steps_use_different_orderings() -> None:
    flow = build_flow("iaf", 12, 3, 8, generator=seeded(0))
    orders = [step.made.in_degrees for step in flow.layers]
    assert not torch.equal(orders[0], orders[1]) and not torch.equal(orders[1], orders[2])
