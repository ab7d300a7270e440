"""Peak memory of the S = 128 × B = 10,000 Monte Carlo evaluation.

Run with ``pytest benchmarks/bench_memory.py``. Each measurement runs in a fresh Python process
(``VmHWM``, the resident high-water mark, starts afresh at exec; ``ru_maxrss`` would carry the
parent's) and reports the peak resident memory above
what the process held once the model and the inputs were built. Ours is
:func:`robustbnn.contract.predict.sample_probs` at its default budget (``memory_mb`` = 1024); the
baseline is a loop over samples (one S = 1 pass over all 10,000 inputs at a time, the lowest
peak a batched evaluation can have), so the ratio says how much memory batching costs. The
(S, B, C) float32 output alone is 128 × 10,000 × 10 × 4 B = 49 MiB. The issue's bound, a peak
below 2 GiB on CPU, is asserted: memory, unlike time, does not depend on the machine's load.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from benchmarks._ratios import note_ratio

MODEL_NAMES = ("mc_dropout", "bbb_gaussian", "bhn_iaf", "mvn")
S, B = 128, 10_000
LIMIT_MB = 2048

_SCRIPT = """
import dataclasses, json, sys, torch
from robustbnn.models import MODELS
from robustbnn.contract.predict import sample_probs
name, mode = sys.argv[1], sys.argv[2]
spec = MODELS.get(name)
cfg = dataclasses.replace(spec.config(), **({{}} if name == "mvn" else {{"hidden": (400, 400)}}))
model = spec.build(cfg, (1, 28, 28), 10, torch.Generator().manual_seed(0))
x = torch.rand({B}, 1, 28, 28, generator=torch.Generator().manual_seed(1))
gen = torch.Generator().manual_seed(2)
def status(key):  # VmRSS / VmHWM in MiB; VmHWM starts afresh at exec, unlike ru_maxrss
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key)) / 1024
before = status("VmRSS:")
if mode == "ours":
    probs = sample_probs(model, x, {S}, generator=gen)
else:
    with torch.no_grad():
        probs = torch.stack([model.sample_logits(x, 1, generator=gen)[0].softmax(-1)
                             for _ in range({S})])
assert probs.shape == ({S}, {B}, 10)
peak = status("VmHWM:")
print(json.dumps({{"before_mb": before, "peak_mb": peak, "above_mb": peak - before}}))
""".format(S=S, B=B)  # noqa: UP032 (the script is full of literal braces)


def peak_above_start(name: str, mode: str) -> float:
    """MiB of resident memory the evaluation added at its peak, in a fresh process."""
    out = subprocess.run([sys.executable, "-c", _SCRIPT, name, mode], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["above_mb"]


_LOOP_MB: dict[str, float] = {}


@pytest.mark.parametrize("mode", ["loop", "ours"])
@pytest.mark.parametrize("name", MODEL_NAMES)
def test_peak_memory_s128_b10000(benchmark: object, name: str, mode: str) -> None:
    benchmark.group = f"memory_S128_B10000[{name}]"
    above = benchmark.pedantic(peak_above_start, args=(name, mode), rounds=1, iterations=1)
    benchmark.extra_info["peak_above_start_mb"] = round(above, 1)
    if mode == "loop":
        _LOOP_MB[name] = above
        return
    if name in _LOOP_MB:
        ratio = above / _LOOP_MB[name]
        benchmark.extra_info["peak_vs_loop"] = round(ratio, 2)
        note_ratio(f"memory_S128_B10000[{name}]", "sample_probs peak MiB", "loop peak MiB",
                   _LOOP_MB[name], above, ratio)
    assert above < LIMIT_MB, f"{name}: the evaluation peaked {above:.0f} MiB above its start"
