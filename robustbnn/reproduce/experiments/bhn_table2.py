"""``bhn_table2``: BHN Table 2, anomaly detection on MNIST by max prob (docs/protocols.md §1.5).

The launchers' net (Hendrycks & Gimpel's 784-256-256-256-10, tanh-GELU, Glorot-uniform
weights as Lasagne's DenseLayer, L2 1e-5 for the MLP and dropout rows), full MNIST, 100 MC
samples, the in-distribution set = the validation split (the code's ``--test_eval 0``),
BHN's input scales (notMNIST in [−0.5, 0.5], Gaussian noise unclipped, the rest in [0, 1]),
1,000 notMNIST images and every image of the other sets the data root holds.
"""

from __future__ import annotations

import dataclasses

from robustbnn.bench_config import BenchConfig
from robustbnn.reproduce.experiment import Experiment, Run, compares_from_table
from robustbnn.reproduce.registry import EXPERIMENTS

SETS = ("uniform", "gaussian", "notmnist", "omniglot", "cifar10bw")
NET = ("*.hidden=(256,256,256)", '*.activation="gelu"')
# mlp and mc_dropout: Lasagne DenseLayers (Glorot-uniform, zero bias) and L2 1e-5 on all
# parameters [CODE dk_anomaly_detection.py]. bhn_realnvp: the script's hnet, 4 couplings of
# 256 hidden units, gradient clipping 100 / ±100 (its defaults).
BASELINES = ("mlp.init=glorot", "mc_dropout.init=glorot", "mlp.weight_decay=1e-05",
             "mc_dropout.weight_decay=1e-05")
BHN = ("bhn_realnvp.coupling=4", "bhn_realnvp.flow_hidden=256",
       "bhn_realnvp.grad_clip_norm=100.0", "bhn_realnvp.grad_clip_value=100.0")
# Where our bhn_realnvp (BHNs.py's hnet) differs from dk_anomaly_detection.py's
# (docs/protocols.md §1.5), as settings: its ε ~ N(0, 0.01²) noise; a ReverseLayer before every
# coupling instead of random permutations between them; no data-dependent init (the script has
# none, so the primary scales start at the LinearFlow shift, ~N(0, 0.01²)) and Glorot-uniform
# primary directions. Our couplings are weight-normed already (coupling_wn=True: its
# CoupledWNDenseLayer, --model hnetWN); ``script_hnet_plain`` is its unnormed --model hnet.
NOISE = ("bhn_realnvp.noise_std=0.01",)
ORDER = ('bhn_realnvp.coupling_order="reverse"',)
PRIMARY = ("bhn_realnvp.data_init=False", 'bhn_realnvp.primary_init="glorot"')
SCRIPT = (*NOISE, *ORDER, *PRIMARY)
# The code trains 100 epochs (its default; the launchers do not override it). The ci budget
# trains 20, the length at which a faithful reimplementation matched the published MLP and
# MC-dropout rows on this CPU (docs/protocols.md §8).
EPOCHS = {"full": 100, "ci": 20}

VARIANTS = {
    "code": "the launchers' protocol: GELU, validation split in-distribution",
    "test_split": "as code, with the MNIST test split as the in-distribution set",
    "relu": "as code, with ReLU hidden units (the lasagne default; docs/protocols.md §8.1)",
    "script_hnet": "as code, the BHN with dk_anomaly_detection.py's hnet: ε ~ N(0, 0.01²), "
                   "a reversal before every coupling, no data-dependent init, Glorot primary "
                   "directions (weight-normed couplings, its --model hnetWN)",
    "script_hnet_plain": "as script_hnet, with unnormed couplings (its --model hnet)",
    "script_noise": "as code, with the script's ε ~ N(0, 0.01²) only (ablation)",
    "script_order": "as code, with the script's reversal before every coupling only (ablation)",
    "script_primary": "as code, with the script's primary net only: no data-dependent init, "
                      "Glorot directions (ablation)",
}
# Each variant's BHN settings on top of BHN (the baselines run as in ``code``).
BHN_VARIANTS = {
    "script_hnet": SCRIPT,
    "script_hnet_plain": (*SCRIPT, "bhn_realnvp.coupling_wn=False"),
    "script_noise": NOISE,
    "script_order": ORDER,
    "script_primary": PRIMARY,
}


def runs(budget: str, variant: str) -> tuple[Run, ...]:
    """Two runs under the variant's protocol: the MLP and MC dropout, and the BHN.

    The ``script_*`` variants change the BHN run only; their baselines are ``code``'s.
    """
    net = NET if variant != "relu" else ("*.hidden=(256,256,256)", '*.activation="relu"')
    cfg = BenchConfig(
        dataset="mnist", models=("mlp", "mc_dropout"), s_eval=100,
        overrides=(*net, *BASELINES, *BHN, f"*.epochs={EPOCHS[budget]}"),
        attacks=(), s_attack=(), eps=(), ood=SETS, n_ood=0,
        ood_counts=(("notmnist", 1000),), ood_preprocessing="bhn_reference",
        ood_in_split="test" if variant == "test_split" else "val")
    bhn = dataclasses.replace(cfg, models=("bhn_realnvp",),
                              overrides=(*cfg.overrides, *BHN_VARIANTS.get(variant, ())))
    return Run("baselines", cfg), Run("bhn", bhn)


def _bind(entry):  # noqa: ANN001, ANN202 - an Entry -> (run, model)
    if entry.row == "BHN":
        return "bhn", "bhn_realnvp"
    return "baselines", {"MLP": "mlp", "MC dropout": "mc_dropout"}[entry.row]


EXPERIMENTS.register("bhn_table2", Experiment(
    name="bhn_table2",
    title="BHN Table 2: anomaly detection on MNIST (max prob)",
    reproduces="Krueger et al. 2017 (Bayesian Hypernetworks), Table 2",
    runs=runs,
    compares=lambda variant: tuple(compares_from_table("bhn_table2", _bind)),
    variants=VARIANTS,
    notes=(
        "Counts: uniform and Gaussian 10,000 each and notMNIST 1,000 as the paper; Omniglot "
        "and CIFAR-10bw are every image the data root holds (in our runs: the two small "
        "background sets and 4,000 CIFAR-10 training images, against about 9,200 and 10,000 "
        "in the paper), so their PR(+)/PR(−) are references only: PR depends on the "
        "OOD/in-distribution ratio, AUROC does not.",
        "The BHN row uses our bhn_realnvp (weight-normed primary net, weight-normed RealNVP "
        "couplings) with the script's 4 couplings of 256 units. Variant script_hnet swaps in "
        "the rest of dk_anomaly_detection.py's hnet: ε ~ N(0, 0.01²), a reversal before "
        "every coupling (not random permutations between them), no data-dependent init and "
        "Glorot primary directions; script_noise, script_order and script_primary each add one "
        "of these, script_hnet_plain unnorms the couplings (its --model hnet).",
        "The notMNIST images are the first 1,000 of the 10,000-image IDX sample of "
        "notMNIST_small (the paper's 1,000 came from the Udacity pickle's test set).",
        "Measured at the ci budget, seeds 0-2 (this report): every MC-dropout AUROC within "
        "0.76 of the paper with seed std ≤ 0.46 (Glorot init and the validation split as "
        "in-distribution; with PyTorch's init and the test split the issue measured notMNIST "
        "96.2 / 96.4 / 97.1). Every MLP AUROC within 1.74 except notMNIST, +3.99: not the "
        "image subset (ten disjoint 1,000-image subsets of our notMNIST move it by sd 0.5-0.8 "
        "(scripts/notmnist_subsets.py) "
        "per seed); a faithful reimplementation also measured +2.9 at 20 epochs (§8.1); at the "
        "full budget's 100 epochs it is −1.42 (reports/reproductions/full/). The MLP's seed std "
        "reaches 2.9 on uniform and CIFAR-bw (seed 1: 93.6 and 92.4), the checkpoint effect of "
        "§8.3.",
        "The BHN row at the ci budget misses notMNIST (80.8 ± 1.1 against 90.07). "
        "dk_anomaly_detection.py's hnet does not explain it: its variants (script_hnet over "
        "seeds 0-2, and each of its differences alone) leave notMNIST where it is or lower it "
        "(the primary net's init, to 48.7); the training length does: the full budget's 100 "
        "epochs give 93.80 at seed 0 (reports/reproductions/variants/README.md).",
    ),
    gpu_estimate="100 epochs x 3 models x 3 seeds on full MNIST; measured on one H200: the "
                 "MLP and MC-dropout runs 14 min of cells (5 min wall, three seeds at once), "
                 "the BHN 6.3 s per epoch alone, about 31 min for its three seeds.",
    data="MNIST, notMNIST, Omniglot, CIFAR-10 (data root)",
))
