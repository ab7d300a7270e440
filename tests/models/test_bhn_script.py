"""The anomaly-detection script's hnet as settings of bhn_realnvp (docs/protocols.md §1.5).

ε ~ N(0, 0.01²), a reversal before every coupling, weight-normed couplings, Glorot primary
directions and no data-dependent init; every default keeps BHNs.py's hnet and its cache key.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from robustbnn.config import override
from robustbnn.errors import ConfigError
from robustbnn.flows import AffineCoupling, Hypernet, Reverse, build_flow
from robustbnn.flows.linear import DELTA
from robustbnn.models.bhn import BHNConfig
from robustbnn.reproduce import EXPERIMENTS
from robustbnn.settings import model_config
from robustbnn.training.cache import cache_key
from tests._helpers import seeded
from tests._toys import build

D = 7  # odd: the coupling's halves differ (3 and 4)
SCRIPT = {"noise_std": 0.01, "coupling_order": "reverse", "data_init": False,
          "primary_init": "glorot"}


@torch.no_grad()
def _randomise_(module: torch.nn.Module, scale: float = 0.5) -> torch.nn.Module:
    g = seeded(3)
    for p in module.parameters():
        p.copy_(scale * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return module


def test_reverse_flips_the_last_axis_at_no_cost() -> None:
    z = torch.randn(2, 3, D, generator=seeded(0))
    out, logdet = Reverse(D)(z)
    torch.testing.assert_close(out, z[..., list(range(D - 1, -1, -1))], rtol=0, atol=0)
    assert logdet.shape == (2, 3) and not logdet.any()


def test_reversed_weight_normed_chain_log_det_matches_the_jacobian() -> None:
    flow = build_flow("realnvp", D, 3, 5, coupling_weight_norm=True, order="reverse",
                      generator=seeded(0))
    assert [type(m).__name__ for m in flow.layers] == ["Reverse", "AffineCoupling"] * 3
    flow = _randomise_(flow).double()
    z = torch.randn(4, D, generator=seeded(1), dtype=torch.float64)
    out, logdet = flow(z)
    assert out.shape == (4, D) and logdet.shape == (4,)
    for i in range(4):
        jac = torch.autograd.functional.jacobian(lambda v: flow(v)[0], z[i])
        torch.testing.assert_close(logdet[i], torch.linalg.slogdet(jac)[1])
    assert logdet.std() > 1e-3  # not a volume-preserving map


def test_weight_normed_coupling_inverts_exactly() -> None:
    # z' = [z1, s(z1) ⊙ z2 + m(z1)]: s and m read off the layer at z2 = 0 and z2 = 1.
    layer = _randomise_(AffineCoupling(D, 5, weight_norm=True, generator=seeded(0))).double()
    z = torch.randn(5, D, generator=seeded(2), dtype=torch.float64)
    out, _ = layer(z)
    z1, y2 = out[:, : D // 2], out[:, D // 2 :]
    m = layer(torch.cat([z1, torch.zeros_like(y2)], -1))[0][:, D // 2 :]
    s = layer(torch.cat([z1, torch.ones_like(y2)], -1))[0][:, D // 2 :] - m
    assert (s > DELTA / 2).all()
    torch.testing.assert_close(torch.cat([z1, (y2 - m) / s], -1), z)


def test_an_even_number_of_reversals_routes_every_coordinate_home() -> None:
    flow = build_flow("realnvp", D, 2, 5, order="reverse", generator=seeded(0))
    assert torch.equal(flow.output_index(D), torch.arange(D))
    odd = build_flow("realnvp", D, 3, 5, order="reverse", generator=seeded(0))
    assert torch.equal(odd.output_index(D), torch.arange(D - 1, -1, -1))


def test_reverse_order_is_refused_for_the_iaf_and_unknown_orders_everywhere() -> None:
    with pytest.raises(ConfigError, match="applies to realnvp only"):
        build_flow("iaf", D, 2, 5, order="reverse")
    with pytest.raises(ConfigError, match="unknown coupling order 'shuffle'"):
        build_flow("realnvp", D, 2, 5, order="shuffle")
    with pytest.raises(ConfigError, match=r"coupling_order.*'shuffle'"):
        override(BHNConfig(), "coupling_order", '"shuffle"', owner="bhn_realnvp")


@pytest.mark.parametrize("noise_std", [1.0, 0.01])
def test_noise_std_scales_epsilon_and_log_q_is_its_density(noise_std: float) -> None:
    net = Hypernet(3, "realnvp", 0, noise_std=noise_std, generator=seeded(0))
    with torch.no_grad():
        net.linear.log_scale.fill_(math.log(1 - DELTA))  # scale 1, shift 0: θ = ε
        net.linear.shift.zero_()
        theta, log_q = net.rsample(20_000, generator=seeded(1), device="cpu",
                                   dtype=torch.float64)
    torch.testing.assert_close(theta.std(0), torch.full((3,), noise_std, dtype=torch.float64),
                               rtol=0.02, atol=0)
    reference = torch.distributions.Normal(0.0, noise_std).log_prob(theta).sum(-1)
    torch.testing.assert_close(log_q, reference)


def test_glorot_primary_directions_fill_their_bound() -> None:
    model = build("bhn_realnvp", primary_init="glorot", hidden=(11, 13))
    for v in model.primary.directions:
        n_out, n_in = v.shape
        bound = math.sqrt(6 / (n_in + n_out))
        assert v.abs().max() <= bound and v.abs().max() > 0.8 * bound
        assert abs(v.std().item() - bound / math.sqrt(3)) < 0.2 * bound


def test_script_settings_build_a_model_whose_scales_start_at_the_linear_shift() -> None:
    model = build("bhn_realnvp", coupling=2, **SCRIPT)
    assert not bool(model.needs_init) and model.hypernet.noise_std == 0.01
    x, y = torch.rand(6, 1, 6, 7, generator=seeded(0)), torch.arange(6) % 7
    model.loss(x, y, n_train=100, generator=seeded(1)).backward()
    # No data-dependent init: g ≈ the shift ~ N(0, 0.01²) (the couplings start near identity).
    with torch.no_grad():
        g, _ = model.hypernet.rsample(2, generator=seeded(2), device="cpu", dtype=torch.float32)
    assert g.abs().max() < 0.06
    logits = model.sample_logits(x, 3, generator=seeded(4))
    assert logits.shape == (3, 6, 7) and torch.isfinite(logits).all()


def test_defaults_keep_the_cache_key_and_new_values_change_it() -> None:
    # 5e407706f81857ab: the key of BHNConfig() before these fields existed (CACHE_FORMAT 2).
    assert cache_key("bhn_realnvp", BHNConfig(), "fp", 0) == "5e407706f81857ab"
    keys = {cache_key("bhn_realnvp", dataclasses.replace(BHNConfig(), **{k: v}), "fp", 0)
            for k, v in SCRIPT.items()}
    assert len(keys) == len(SCRIPT) and "5e407706f81857ab" not in keys


def test_bhn_table2_script_variants_change_the_bhn_run_only() -> None:
    exp = EXPERIMENTS.get("bhn_table2")
    code = {r.label: r.config for r in exp.runs("ci", "code")}
    for variant in ("script_hnet", "script_hnet_plain", "script_noise", "script_order",
                    "script_primary"):
        runs = {r.label: r.config for r in exp.runs("ci", variant)}
        assert runs["baselines"] == code["baselines"]
        ours = model_config("bhn_realnvp", runs["bhn"].overrides, runs["bhn"].shrink)
        base = model_config("bhn_realnvp", code["bhn"].overrides, code["bhn"].shrink)
        changed = {f.name for f in dataclasses.fields(ours)
                   if getattr(ours, f.name) != getattr(base, f.name)}
        expected = {"script_hnet": set(SCRIPT), "script_hnet_plain": {*SCRIPT, "coupling_wn"},
                    "script_noise": {"noise_std"}, "script_order": {"coupling_order"},
                    "script_primary": {"data_init", "primary_init"}}[variant]
        assert changed == expected, variant
    script = model_config("bhn_realnvp", exp.runs("ci", "script_hnet")[1].config.overrides)
    assert (script.noise_std, script.coupling_order, script.coupling_wn) == (0.01, "reverse",
                                                                              True)
