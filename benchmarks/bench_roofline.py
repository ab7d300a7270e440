"""The roofline of one S = 32 MC-dropout attack step on a 784-400-400-10 net (B = 500).

Run with ``pytest benchmarks/bench_roofline.py``. The step's unavoidable work is six GEMMs
(the first layer shared by all samples; input gradients only, no weight gradients):

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

11.1 GFLOP in all. The baseline times exactly these GEMMs back to back on random matrices:
this machine's matmul throughput at the step's shapes, the time the step would take if
masks, nonlinearities, softmax and autograd were free. Ours is the attack step itself; its
``speedup_vs_gemms_only`` is the fraction of that limit the step reaches (1.0 = at the
roofline). The GFLOP/s of both are logged and stored in ``extra_info``.
"""

from __future__ import annotations

import dataclasses

import torch

from benchmarks._ratios import measure
from robustbnn.attacks.fgsm import FGSM
from robustbnn.models import MODELS

S, B = 32, 500
SHAPES = [(B, 784, 400), (S * B, 400, 400), (S * B, 400, 10),
          (S * B, 10, 400), (S * B, 400, 400), (B, 400, 784)]
GFLOP = sum(2 * m * k * n for m, k, n in SHAPES) / 1e9


def test_gemms_only(benchmark: object, device: torch.device) -> None:
    gen = torch.Generator().manual_seed(0)
    pairs = [(torch.randn(m, k, generator=gen).to(device), torch.randn(k, n, generator=gen)
              .to(device)) for m, k, n in SHAPES]

    def gemms() -> None:
        for a, b in pairs:
            torch.mm(a, b)

    median = measure(benchmark, "roofline[mc_dropout S32 B500]", "gemms_only", gemms,
                     baseline=True, rounds=10, device=device)
    benchmark.extra_info["gflop"] = round(GFLOP, 3)
    benchmark.extra_info["gflop_per_s"] = round(GFLOP / median, 1)


def test_attack_step(benchmark: object, device: torch.device) -> None:
    spec = MODELS.get("mc_dropout")
    cfg = dataclasses.replace(spec.config(), hidden=(400, 400))
    model = spec.build(cfg, (1, 28, 28), 10, torch.Generator().manual_seed(0)).to(device)
    model.requires_grad_(False)
    gen = torch.Generator().manual_seed(1)
    x = torch.rand(B, 1, 28, 28, generator=gen).to(device)
    y = torch.randint(0, 10, (B,), generator=gen).to(device)
    attack = FGSM(eps=0.1, n_samples=S, objective="expected")
    sample_gen = torch.Generator(device).manual_seed(2)
    median = measure(benchmark, "roofline[mc_dropout S32 B500]", "attack_step",
                     lambda: attack(model, x, y, generator=sample_gen), rounds=10,
                     device=device)
    benchmark.extra_info["gflop_per_s"] = round(GFLOP / median, 1)
