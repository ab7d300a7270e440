"""Every model's batched ``sample_logits`` has the distribution of a plain per-sample reference.

The fast paths share work across samples (the first layer, the weight-norm directions),
fold dropout's rescaling into the next GEMM, draw weights a few samples at a time, or use the
local reparameterisation. Each test draws S logits both ways and compares, per example and
class, the mean (z-score under the Monte Carlo standard error) and the variance (ratio).
The references are written out here from the papers' definitions, one sample at a time,
with ``F.linear`` and explicitly drawn weights or masks.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import Tensor

from robustbnn.models import MODELS
from tests._helpers import seeded
from tests._toys import build

S = 4000  # samples per side: the std error of a variance ratio is about 2.2%
B = 3


def assert_same_distribution(fast: Tensor, ref: Tensor, *, z: float = 5.0,
                             var_tol: float = 0.2) -> None:
    """Means agree within ``z`` standard errors and variances within ``var_tol`` (relative)."""
    assert fast.shape == ref.shape
    m1, m2 = fast.double().mean(0), ref.double().mean(0)
    v1, v2 = fast.double().var(0), ref.double().var(0)
    se = ((v1 + v2) / fast.shape[0]).sqrt().clamp_min(1e-12)
    worst_z = ((m1 - m2).abs() / se).max().item()
    assert worst_z < z, f"means differ by {worst_z:.1f} standard errors"
    ratio = v1 / v2
    assert (ratio - 1).abs().max().item() < var_tol, f"variance ratios {ratio.flatten()}"


def dropout_reference(model, x: Tensor, seed: int) -> Tensor:  # noqa: ANN001
    """Inverted dropout with F.dropout (torch's global RNG), one mask per sample."""
    torch.manual_seed(seed)
    out = []
    for _ in range(S):
        h = x.flatten(1) if model.features is None else model.features(x)
        h = F.dropout(h, model.head_p, training=True)
        for i, layer in enumerate(model.layers):
            h = F.linear(h, layer.weight, layer.bias)
            if i < len(model.layers) - 1:
                h = F.dropout(model.act(h), model.p, training=True)
        out.append(h)
    return torch.stack(out)


def bbb_reference(model, x: Tensor, gen: torch.Generator) -> Tensor:  # noqa: ANN001
    """Weights w = μ + softplus(ρ)ε drawn per sample, shared by the batch."""
    out = []
    for _ in range(S):
        h = x.flatten(1)
        for i, layer in enumerate(model.layers):
            (wm, ws), (bm, bs) = layer.posterior()
            w = wm + ws * torch.randn(wm.shape, generator=gen)
            b = bm + bs * torch.randn(bm.shape, generator=gen)
            h = F.linear(h, w, b)
            if i < len(model.layers) - 1:
                h = model.act(h)
        out.append(h)
    return torch.stack(out)


def bhn_reference(model, x: Tensor, gen: torch.Generator) -> Tensor:  # noqa: ANN001
    """θ_j = g_j v_j / ‖v_j‖ written out as a weight matrix for every sample."""
    g, _ = model.hypernet.rsample(S, generator=gen, device=None, dtype=x.dtype)
    net = model.primary
    out = []
    for gs in g:
        h = x.flatten(1)
        scales = gs.split(net.out_sizes)
        for i, (v, b, gi) in enumerate(zip(net.directions, net.biases, scales, strict=True)):
            w = gi[:, None] * v / v.norm(dim=1, keepdim=True)
            h = F.linear(h, w, b)
            if i < len(scales) - 1:
                h = net.act(h)
        out.append(h)
    return torch.stack(out)


def mvn_reference(model, x: Tensor, gen: torch.Generator) -> Tensor:  # noqa: ANN001
    """A weight matrix M + diag(√a) E diag(√b) per layer and sample, shared by the batch."""
    out = []
    for _ in range(S):
        h = x.flatten(1)
        for i, layer in enumerate(model.layers):
            w = layer.sample_weight(1, gen)[0]  # (r, c)
            h = layer.augment(h) @ w
            if i < len(model.layers) - 1:
                h = model.act(h)
        out.append(h)
    return torch.stack(out)


def vhn_reference(model, x: Tensor, gen: torch.Generator) -> Tensor:  # noqa: ANN001
    """Each example's own weight matrix diag(d)M₀ + diag(√a) E diag(√b), drawn explicitly."""
    out = []
    for _ in range(S):
        rows = []
        for xb in x.flatten(1):
            h = xb[None]  # (1, in)
            for i, layer in enumerate(model.layers):
                d, log_a, log_b = (t[0] for t in layer.posterior(h))
                e = torch.randn(layer.mean.shape, generator=gen)
                w = d[:, None] * layer.mean + (0.5 * log_a).exp()[:, None] * e * (
                    0.5 * log_b).exp()
                h = layer.augment(h) @ w
                if i < len(model.layers) - 1:
                    h = model.act(h)
            rows.append(h[0])
        out.append(torch.stack(rows))
    return torch.stack(out)


def bhn_full_reference(model, x: Tensor, gen: torch.Generator) -> Tensor:  # noqa: ANN001
    """Every weight and bias read off θ and applied with F.linear, one sample at a time."""
    theta, _ = model.hypernet.rsample(S, generator=gen, device=None, dtype=x.dtype)
    out = []
    for t in theta:
        parts = t.split(model.chunks)
        h = x.flatten(1)
        for i, (n_out, n_in) in enumerate(model.shapes):
            h = F.linear(h, parts[2 * i].view(n_out, n_in), parts[2 * i + 1])
            if i < len(model.shapes) - 1:
                h = model.act(h)
        out.append(h)
    return torch.stack(out)


CASES = {
    "mc_dropout": ({}, "dropout"),
    "mc_dropout+cnn": ({"arch": "cnn", "cnn_channels": (2, 3), "cnn_hidden": (9,)}, "dropout"),
    "bbalpha_0": ({}, "dropout"),
    "bbalpha_05": ({}, "dropout"),
    "bbalpha_1": ({}, "dropout"),
    "bbb_gaussian": ({"rho_init": -1.0}, "bbb"),  # local_reparam "first"
    "bbb_gaussian+none": ({"rho_init": -1.0, "local_reparam": "none"}, "bbb"),
    "bbb_gaussian+all": ({"rho_init": -1.0, "local_reparam": "all"}, "bbb"),
    "bbb_mixture": ({"rho_init": -1.0}, "bbb"),
    "bbb_mixture+all": ({"rho_init": -1.0, "local_reparam": "all"}, "bbb"),
    "bhn_iaf": ({"init_log_scale": -1.0, "data_init": False}, "bhn"),
    "bhn_realnvp": ({"init_log_scale": -1.0, "data_init": False}, "bhn"),
    "bhn_full": ({"init_log_scale": -1.0, "hidden": (5,)}, "bhn_full"),
    "mvn": ({"log_var_init": -1.0}, "mvn"),  # local_reparam "all"
    "mvn+none": ({"log_var_init": -1.0, "local_reparam": "none"}, "mvn"),
    "mvn+first": ({"log_var_init": -1.0, "local_reparam": "first"}, "mvn"),
    "vhn": ({}, "vhn"),
}
# Hypernets draw θ for all samples first, so a reference given the same generator sees the
# same θ; their heavy-tailed logits would need far more samples for a variance check alone.
EXACT = {"bhn", "bhn_full"}
REFERENCES = {"bbb": bbb_reference, "bhn": bhn_reference, "mvn": mvn_reference,
              "vhn": vhn_reference, "bhn_full": bhn_full_reference}


# Models whose per-sample reference test needs a fitted posterior (a fresh build has none), so
# it lives beside the model's other tests.
ELSEWHERE = {"laplace": "tests/models/test_laplace.py::"
                        "test_batched_samples_match_a_per_sample_reference",
             "deep_ensemble": "tests/models/test_deep_ensemble.py::"
                              "test_predictive_at_s_equal_m_is_the_exact_ensemble_average",
             "swag": "tests/models/test_swag.py::"
                     "test_first_layer_output_sampling_has_the_weight_sampling_law",
             # samples are stored weight vectors: each sample is one of them, by the generator
             "sgld": "tests/models/test_sgmcmc.py::"
                     "test_samples_are_stored_weights_drawn_by_the_generator",
             "sghmc": "tests/models/test_sgmcmc.py::"
                      "test_samples_are_stored_weights_drawn_by_the_generator",
             "hmc": "tests/models/test_hmc.py::"
                    "test_sampling_stores_every_draw_reproducibly_and_reports_mixing"}


def test_every_stochastic_model_has_a_case() -> None:
    # The built-in models (plug-ins registered by other tests live outside robustbnn).
    stochastic = {n for n in MODELS.names() if MODELS.get(n).stochastic
                  and MODELS.get(n).config.__module__.startswith("robustbnn.")}
    covered = {case.split("+")[0] for case in CASES} | ELSEWHERE.keys()
    assert stochastic <= covered, f"no distribution test for {sorted(stochastic - covered)}"


@pytest.mark.bench
@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_sample_logits_matches_reference_distribution(case: str) -> None:
    name = case.split("+")[0]
    changes, kind = CASES[case]
    model = build(name, **changes)
    x = torch.rand(B, 1, 6, 7, generator=seeded(1))
    with torch.no_grad():
        fast = model.sample_logits(x, S, generator=seeded(2))
        if kind == "dropout":
            ref = dropout_reference(model, x, seed=3)
        elif kind in EXACT:  # the same θ draws: the primary nets must agree value for value
            ref = REFERENCES[kind](model, x, seeded(2))
            torch.testing.assert_close(fast, ref, rtol=1e-4, atol=1e-5)
        else:
            ref = REFERENCES[kind](model, x, seeded(3))
    assert fast.shape == (S, B, 7)
    assert fast.double().var(0).min() > 1e-6, "the test needs visible posterior noise"
    assert_same_distribution(fast, ref)


# attack_logits (one mask per sample, shared by the batch): per example the same law.
ATTACK_CASES = {"mc_dropout": {}, "bbalpha_05": {}, "bbalpha_1": {"p": 0.25, "input_p": 0.3},
                "mc_dropout+cnn": CASES["mc_dropout+cnn"][0]}


@pytest.mark.bench
@pytest.mark.parametrize("case", sorted(ATTACK_CASES))
def test_attack_logits_match_the_per_example_reference(case: str) -> None:
    model = build(case.split("+")[0], **ATTACK_CASES[case])
    x = torch.rand(B, 1, 6, 7, generator=seeded(1))
    with torch.no_grad():
        fast = model.attack_logits(x, S, generator=seeded(2))
        ref = dropout_reference(model, x, seed=3)
    assert fast.double().var(0).min() > 1e-6, "the test needs visible posterior noise"
    assert_same_distribution(fast, ref)


def test_the_check_catches_a_wrong_variance() -> None:
    model = build("bbb_gaussian", rho_init=-1.0, local_reparam="all")
    x = torch.rand(B, 1, 6, 7, generator=seeded(1))
    with torch.no_grad():
        fast = model.sample_logits(x, S, generator=seeded(2))
        ref = bbb_reference(model, x, seeded(3))
    mean = ref.mean(0)
    with pytest.raises(AssertionError, match="variance ratios"):
        assert_same_distribution(fast, mean + 1.3 * (ref - mean))
