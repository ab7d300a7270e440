"""How much BHN Table 2's notMNIST AUROC depends on which 1,000 notMNIST images are scored.

Scores the committed ``bhn_table2`` ci-budget models (seeds 0-2; run ``robustbnn reproduce
bhn_table2`` first, or point the cache at its models) on ten disjoint 1,000-image subsets of
the 10,000-image notMNIST sample, against the MNIST validation split, by max prob (the note
in the experiment: sd 0.5-0.8 AUROC per seed for the MLP).

    ROBUSTBNN_DATA=../shared/data python scripts/notmnist_subsets.py [CACHE_DIR]
"""

import dataclasses
import os
import statistics as st
import sys

import numpy as np
import torch

from robustbnn.data.ood_sets import load_ood
from robustbnn.metrics import auroc
from robustbnn.ood import UNCERTAINTIES
from robustbnn.reproduce import EXPERIMENTS
from robustbnn.run.context import RunSpec, bench_data
from robustbnn.run.tasks.train import trained_model
from robustbnn.training.cache import resolve_cache_dir

torch.set_num_threads(1)
ROOT = os.environ.get("ROBUSTBNN_DATA", "../shared/data")
CACHE = str(resolve_cache_dir(sys.argv[1] if len(sys.argv) > 1 else None))
exp = EXPERIMENTS.get("bhn_table2")
run = exp.runs("ci", "code")[0]
x_all = load_ood("notmnist", 0, ROOT, preprocessing="bhn_reference")
for model in ("mlp", "mc_dropout"):
    for seed in (0, 1, 2):
        cfg = dataclasses.replace(run.config, seed=seed)
        spec = RunSpec(cfg, ROOT, False, "cpu", CACHE)
        m = trained_model(spec, model, None)
        data = bench_data(spec)
        g = torch.Generator().manual_seed(123)
        S = 1 if model == "mlp" else 100
        score = UNCERTAINTIES.get("max_prob")
        with torch.no_grad():
            s_in = score(torch.softmax(m.sample_logits(data.val.x, S, generator=g), -1)).numpy()
            s_out = score(torch.softmax(m.sample_logits(x_all, S, generator=g), -1)).numpy()
        vals = []
        for k in range(10):
            o = s_out[k * 1000:(k + 1) * 1000]
            vals.append(100 * auroc(np.r_[np.zeros(len(s_in)), np.ones(len(o))], np.r_[s_in, o]))
        sys.stdout.write(f"{model} seed {seed}: subsets {[round(v, 1) for v in vals]}, "
                         f"mean {st.mean(vals):.2f}, sd {st.stdev(vals):.2f}\n")
