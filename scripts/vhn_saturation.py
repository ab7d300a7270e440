"""Where a variational hypernetwork's saturated logits come from (the note of ``vhn_fig3``).

Trains ``vhn`` on the embedded mnist5k (seed 0, 1 thread) under four settings and prints, on
the first 500 test points with 20 posterior samples: accuracy, the largest |logit|, the median
top-two logit gap, the share of gaps above 88 (float32 exp underflows there, so the softmax is
one-hot) and the share of points whose input gradient is exactly zero under the CE of the
predictive and under the Carlini-Wagner margin. About 3 minutes on 2 CPU cores:

    python scripts/vhn_saturation.py
"""

import sys

import torch

from robustbnn.attacks._grad import GradientSettings, mc_input_grad
from robustbnn.data import load_dataset
from robustbnn.models import MODELS
from robustbnn.settings import model_config
from robustbnn.training.fit import fit

torch.set_num_threads(1)
data = load_dataset("mnist5k", None)
variants = {
  "cdn_defaults_20ep": (),
  "quick_budget": ("vhn.epochs=50", "vhn.lr=0.003", "vhn.log_var_shift=-3"),
  "lambda_1e-2": ("vhn.kl_weight=0.01",),
  "M0_std_0.1": ("vhn.mean_init_std=0.1",),
}
for name, ov in variants.items():
    cfg = model_config("vhn", ("vhn.epochs=20",) + ov)
    g = torch.Generator().manual_seed(0)
    m = MODELS.get("vhn").build(cfg, (1, 28, 28), 10, g)
    rep = fit(m, cfg, data, name="vhn", generator=g, progress=False)
    x, y = data.test.x[:500], data.test.y[:500]
    with torch.no_grad():
        logits = m.sample_logits(x, 20, generator=g)  # (S,B,C)
    top2 = logits.topk(2, -1).values
    gap = (top2[..., 0] - top2[..., 1])
    acc = (torch.softmax(logits, -1).mean(0).argmax(-1) == y).float().mean().item()
    grad = mc_input_grad(m, x, y, GradientSettings(1, "predictive"), generator=g)
    zero = (grad.flatten(1).abs().sum(1) == 0).float().mean().item()
    gradcw = mc_input_grad(m, x, y, GradientSettings(1, "cw"), generator=g)
    zerocw = (gradcw.flatten(1).abs().sum(1) == 0).float().mean().item()
    sys.stdout.write(f"{name}: acc {acc:.3f} max|logit| {logits.abs().max():.0f} median gap "
                     f"{gap.median():.1f} gap>88 {(gap > 88).float().mean():.3f} zero-grad CE "
                     f"{zero:.3f} CW {zerocw:.3f}\n")
