"""The roofline of one S = 32 MC-dropout attack step on a 784-400-400-10 net (B = 500).

Run with ``pytest benchmarks/bench_roofline.py``. Input gradients only, no weight gradients;
the first layer is shared by all samples. Two samplers, two sets of GEMMs:

**A mask per example** (``attack_masks="per_example"``) does six GEMMs:

=========  ==========================================  ===========
pass       GEMM (rows × inner → cols)                  GFLOP
=========  ==========================================  ===========
forward    500 × 784 → 400 (shared first layer)         0.314
forward    16,000 × 400 → 400                           5.120
forward    16,000 × 400 → 10                            0.128
backward   16,000 × 10 → 400                            0.128
backward   16,000 × 400 → 400                           5.120
backward   500 × 400 → 784 (summed over samples)        0.314
=========  ==========================================  ===========

11.1 GFLOP in all.

**A mask per sample** (``"per_sample"``, the default; ``robustbnn.models._kept_units``): each
sample is the sub-network of its kept units, so the hidden GEMMs are batched (32 × 500 × K₁
→ K₂) and (32 × 500 × K₂ → 10), with K the largest kept count of the 32 samples (about 220
of 400 at p = 1/2), forward and backward: about 3.6 GFLOP.

Each group's baseline times exactly its GEMMs back to back on random matrices of those
shapes: this machine's matmul throughput there, the time the step would take if masks,
gathers, nonlinearities, softmax and autograd were free. Ours is the attack step itself;
its ``speedup_vs_gemms_only`` is the fraction of that limit the step reaches (1.0 = at the
roofline). The default step is also timed against the per-example GEMMs: above 1 it beats
the roofline of the per-example algorithm. GFLOP and GFLOP/s are stored in ``extra_info``.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch

from benchmarks._ratios import measure
from robustbnn.attacks.fgsm import FGSM
from robustbnn.models import MODELS
from robustbnn.models._kept_units import kept_units

S, B = 32, 500
_K = kept_units(S, 400, 0.5, torch.Generator().manual_seed(2), torch.device("cpu"))[0].shape[1]
# (batch, rows, inner, cols) per GEMM; batch 1 is a plain mm.
GEMMS = {
    "per_example": [(1, B, 784, 400), (1, S * B, 400, 400), (1, S * B, 400, 10),
                    (1, S * B, 10, 400), (1, S * B, 400, 400), (1, B, 400, 784)],
    "per_sample": [(1, B, 784, 400), (S, B, _K, _K), (S, B, _K, 10),
                   (S, B, 10, _K), (S, B, _K, _K), (1, B, 400, 784)],
}


def gflop(mode: str) -> float:
    return sum(2 * s * m * k * n for s, m, k, n in GEMMS[mode]) / 1e9


def _group(mode: str) -> str:
    return f"roofline[mc_dropout S32 B500 {mode}]"


@pytest.mark.parametrize("mode", sorted(GEMMS))
def test_gemms_only(benchmark: object, device: torch.device, mode: str) -> None:
    gen = torch.Generator().manual_seed(0)
    pairs = [(torch.randn(s, m, k, generator=gen).to(device),
              torch.randn(s, k, n, generator=gen).to(device)) for s, m, k, n in GEMMS[mode]]

    def gemms() -> None:
        for a, b in pairs:
            torch.bmm(a, b)

    median = measure(benchmark, _group(mode), "gemms_only", gemms, baseline=True, rounds=10,
                     device=device)
    benchmark.extra_info["gflop"] = round(gflop(mode), 3)
    benchmark.extra_info["gflop_per_s"] = round(gflop(mode) / median, 1)


def _step(device: torch.device, mode: str) -> object:
    spec = MODELS.get("mc_dropout")
    cfg = dataclasses.replace(spec.config(), hidden=(400, 400), attack_masks=mode)
    model = spec.build(cfg, (1, 28, 28), 10, torch.Generator().manual_seed(0)).to(device)
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(1)
    x = torch.rand(B, 1, 28, 28, generator=gen).to(device)
    y = torch.randint(0, 10, (B,), generator=gen).to(device)
    attack = FGSM(eps=0.1, n_samples=S, objective="expected")
    sample_gen = torch.Generator(device).manual_seed(2)
    return lambda: attack(model, x, y, generator=sample_gen)


@pytest.mark.parametrize("mode", sorted(GEMMS))
def test_attack_step(benchmark: object, device: torch.device, mode: str) -> None:
    median = measure(benchmark, _group(mode), "attack_step", _step(device, mode), rounds=10,
                     device=device)
    benchmark.extra_info["gflop_per_s"] = round(gflop(mode) / median, 1)


def test_default_step_against_the_per_example_roofline(benchmark: object,
                                                       device: torch.device) -> None:
    measure(benchmark, _group("per_example"), "attack_step_per_sample_masks",
            _step(device, "per_sample"), rounds=10, device=device)
