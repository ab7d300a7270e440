"""``bbb_tutorial_noise``: the BbB PyTorch tutorial's entropy on N(0, 1) noise, MLP vs BNN.

docs/protocols.md §4.4: all 60,000 training images, no epoch selection; the MLP is 784-400-400-10
ReLU (10 epochs of Adam 1e-3, nn.Linear's init), the BNN 784-512-512-10 sigmoid with prior
N(0, 6²) (std 6), μ ~ U(−0.6, 0.6), ρ = −6, one weight sample per step, 20 epochs of Adam
1e-3. 1,000 images of unclipped N(0, 1) noise, 100 samples, entropy in bits of the geometric
mean of the samples' probabilities.

Variants beyond ``tutorial`` (ours: closed-form KL, constant learning rate) add the two details
of the tutorial's code that its text does not state (issue 31): its KL is the one-sample Monte
Carlo log q(w) − log p(w) with the mean detached in log q, divided by the number of minibatches
(``kl_estimator="mc_detached_mean"``; the scaling equals ours, see
:meth:`robustbnn.models.bbb.BayesByBackpropMLP.loss`), and its Adam learning rate is a tensor
divided in place by 1.1 after every epoch, so epoch e trains at 1e-3 / 1.1^(e − 1) (the MLP's
is a float, whose ``/= 1.1`` never reaches Adam).
"""

from __future__ import annotations

import math

from robustbnn.bench_config import BenchConfig
from robustbnn.reproduce.experiment import Experiment, Run, compares_from_table
from robustbnn.reproduce.registry import EXPERIMENTS

BNN_EPOCHS = 20
# fit's lr_decay is the total decay over E epochs, lr0 · decay^(−(e − 1)/(E − 1)): 1.1^(E − 1)
# gives the tutorial's 1e-3 / 1.1^(e − 1) at epoch e.
MC_KL = 'bbb_gaussian.kl_estimator="mc_detached_mean"'
LR_DECAY = f"bbb_gaussian.lr_decay={1.1 ** (BNN_EPOCHS - 1)!r}"
VARIANTS = {
    "tutorial": "the tutorial's settings throughout, our closed-form KL and constant lr",
    "tutorial_code": "as tutorial, with the tutorial code's one-sample Monte Carlo KL (mean "
                     "detached in log q) and its learning rate divided by 1.1 every epoch",
    "mc_kl_only": "as tutorial, with the tutorial code's Monte Carlo KL (mean detached) only",
    "lr_decay_only": "as tutorial, with the tutorial code's learning-rate decay only",
    "mc_kl_attached": "as tutorial, with eq. 2's Monte Carlo KL, the mean not detached: Monte "
                      "Carlo noise without the detached mean's extra −ε/σ gradient",
}
# Each variant's overrides of the BNN after the tutorial's settings.
BNN_CODE = {
    "tutorial": (),
    "tutorial_code": (MC_KL, LR_DECAY),
    "mc_kl_only": (MC_KL,),
    "lr_decay_only": (LR_DECAY,),
    "mc_kl_attached": ('bbb_gaussian.kl_estimator="mc"',),
}


def runs(budget: str, variant: str) -> tuple[Run, ...]:
    """One run; the tutorial is small enough that ci is the full budget."""
    overrides = (
        "mlp.hidden=(400,400)", "mlp.epochs=10", "mlp.selection=last",
        "bbb_gaussian.hidden=(512,512)", 'bbb_gaussian.activation="sigmoid"',
        f"bbb_gaussian.neg_log_sigma={-math.log(6.0)!r}", 'bbb_gaussian.init="uniform"',
        "bbb_gaussian.init_scale=0.6", "bbb_gaussian.rho_init=-6.0",
        f"bbb_gaussian.epochs={BNN_EPOCHS}", "bbb_gaussian.selection=last",
        *BNN_CODE[variant],
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
    variants=VARIANTS,
    notes=(
        "Gaussian noise in the `bhn_reference` preprocessing is N(0, 1) per pixel, unclipped, "
        "as the tutorial's torch.randn images.",
        "The tutorial's KL is a one-sample Monte Carlo estimate divided by the number of "
        "minibatches; ours is the closed-form Gaussian KL divided by the training-set size "
        "(the same objective per example in expectation). Its log q detaches the mean "
        "(`Normal(self.w_mu.data, σ)`), which adds a zero-mean gradient −ε/σ to every μ, "
        "σ ≈ 0.0025 at the start; variants `tutorial_code`, `mc_kl_only` and "
        "`mc_kl_attached` train with it or with eq. 2's estimate.",
        "The tutorial's Adam learning rate is a tensor divided in place by 1.1 after every "
        "epoch (1e-3 / 1.1^19 ≈ 1.6e-4 in its 20th epoch); variants `tutorial_code` and "
        "`lr_decay_only` train with that decay.",
        "Measured (ci = full budget, seeds 0-2): the MLP's 0.146 bits match the tutorial's "
        "0.1446; the BNN's 0.68 ± 0.03 bits are 4.6x the MLP's but 0.32 below the tutorial's "
        "single printed run (0.99). The tutorial's own code gives 1.02 bits (seed 0, measured "
        "outside the project); it differs from variant `tutorial` in the two details above.",
        "The two details, measured (reports/reproductions/variants/): `tutorial_code` (both) "
        "gives 0.954 ± 0.030 bits over seeds 0-2, within 0.04 of the tutorial; each alone "
        "stays at our value (seed 0: `mc_kl_only` 0.681, `lr_decay_only` 0.711, `tutorial` "
        "0.711). The gap is their interaction.",
    ),
    gpu_estimate="the same as ci (the tutorial's own budget), a few minutes on CPU.",
    data="MNIST (data root)",
))
