"""Cache-sized blocks of posterior samples: how many samples one pass of a network takes.

A batched Monte Carlo pass over S samples and B examples moves (S, B, H) activations. On a
CPU, once those leave the cache every elementwise step (masks, nonlinearities, noise) runs at
memory bandwidth, and the batched path fell behind a plain loop over samples
(``benchmarks/README.md``). So models compute what all samples share once, then take the
samples in blocks whose (S, B, H) activations hold about ``BLOCK_FLOATS[device]`` floats.
On a GPU one block holds everything: there, bigger launches win. The numbers are
measurements, not habits: ``benchmarks/bench_predictive.py`` and ``bench_attack_step.py``
time them per device.

Blocks are a deterministic function of (S, B, H, device type), so a seed gives the same
draws on every run of the same device type; the noise is drawn block by block.
"""

from __future__ import annotations

import torch

# Floats of one (S, B, H) activation per block, by device type. CPU, measured on 2 cores
# (AVX2) at S = 100, B = 1,000 (benchmarks/README.md): 2^18 (1 MiB) took 227 ms for
# 784-400-400-10 MC dropout against 496 ms unblocked; 2^16 and 2^20 were within 5% of it,
# except 784-100-10 vhn (93 and 84 ms against 81).
BLOCK_FLOATS = {"cpu": 1 << 18}
_UNBLOCKED = 1 << 62


def sample_blocks(n_samples: int, batch: int, width: int, device: torch.device) -> list[int]:
    """Sizes of consecutive sample blocks (summing to ``n_samples``), each ≥ 1 sample.

    Args:
        n_samples: S.
        batch: B, the examples every sample is applied to.
        width: H, the widest activation of a sample and example.
        device: Where the pass runs; devices not in ``BLOCK_FLOATS`` take all samples at once.
    """
    floats = BLOCK_FLOATS.get(torch.device(device).type, _UNBLOCKED)
    per_block = max(1, min(n_samples, floats // max(1, batch * width)))
    return [min(per_block, n_samples - s) for s in range(0, n_samples, per_block)]
