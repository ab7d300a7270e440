"""``bbb_tutorial_noise``: the BbB PyTorch tutorial's entropy on N(0, 1) noise, MLP vs BNN.

docs/protocols.md §4.4: all 60,000 training images, no epoch selection; the MLP is 784-400-400-10
ReLU (10 epochs of Adam 1e-3, nn.Linear's init), the BNN 784-512-512-10 sigmoid with prior
N(0, 6²) (std 6), μ ~ U(−0.6, 0.6), ρ = −6, one weight sample per step, 20 epochs of Adam
1e-3. 1,000 images of unclipped N(0, 1) noise, 100 samples, entropy in bits of the geometric
mean of the samples' probabilities.
"""

from __future__ import annotations

import math

from robustbnn.bench_config import BenchConfig
from robustbnn.reproduce.experiment import Experiment, Run, compares_from_table
from robustbnn.reproduce.registry import EXPERIMENTS


def runs(budget: str, variant: str) -> tuple[Run, ...]:
    """One run; the tutorial is small enough that ci is the full budget."""
    overrides = (
        "mlp.hidden=(400,400)", "mlp.epochs=10", "mlp.selection=last",
        "bbb_gaussian.hidden=(512,512)", 'bbb_gaussian.activation="sigmoid"',
        f"bbb_gaussian.neg_log_sigma={-math.log(6.0)!r}", 'bbb_gaussian.init="uniform"',
        "bbb_gaussian.init_scale=0.6", "bbb_gaussian.rho_init=-6.0",
        "bbb_gaussian.epochs=20", "bbb_gaussian.selection=last",
    )
    return (Run("main", BenchConfig(
        dataset="mnist60k", models=("mlp", "bbb_gaussian"), overrides=overrides, s_eval=100,
        attacks=(), s_attack=(), eps=(), ood=("gaussian",), n_ood=1000,
        ood_preprocessing="bhn_reference", extra_measures=("log_mean_entropy_bits",))),)


EXPERIMENTS.register("bbb_tutorial_noise", Experiment(
    name="bbb_tutorial_noise",
    title="Bayes by Backprop tutorial: entropy (bits) on N(0, 1) noise, MLP vs BNN",
    reproduces="the Bayes by Backprop PyTorch tutorial (docs/protocols.md §4.4)",
    runs=runs,
    compares=lambda variant: tuple(compares_from_table(
        "bbb_tutorial_noise",
        lambda e: ("main", {"MLP": "mlp", "BNN": "bbb_gaussian"}[e.row]))),
    variants={"tutorial": "the tutorial's settings throughout"},
    notes=(
        "Gaussian noise in the `bhn_reference` preprocessing is N(0, 1) per pixel, unclipped, "
        "as the tutorial's torch.randn images.",
        "The tutorial's KL is a one-sample Monte Carlo estimate divided by the number of "
        "minibatches; ours is the closed-form Gaussian KL divided by the training-set size "
        "(the same objective per example in expectation).",
        "Measured (ci = full budget, seeds 0-2): the MLP's 0.146 bits match the tutorial's "
        "0.1446; the BNN's 0.68 ± 0.03 bits are 4.6x the MLP's but 0.32 below the tutorial's "
        "single printed run (0.99). Not yet explained: the two KL estimators differ in "
        "gradient variance only, and no other setting of §4.4 differs.",
    ),
    gpu_estimate="the same as ci (the tutorial's own budget), a few minutes on CPU.",
    data="MNIST (data root)",
))
