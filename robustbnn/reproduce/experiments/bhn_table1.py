"""``bhn_table1_mnist5000``: BHN Table 1, MNIST 5,000 columns (A) 800 and (B) 1,200 units.

The first 5,000 official training images, model selection on the 10,000-image validation
split by accuracy with 20 MC samples, test accuracy on the 10,000 test images with 200 MC
samples (docs/protocols.md §1.3). Rows: BHN with 0 (the paper's BbB*), 8 and 12 RealNVP coupling
layers (our ``bhn_realnvp``, the code's init), MC dropout (p = 0.5), and a plain MLP beside
them (§8.5: it already beats two of the published rows).
"""

from __future__ import annotations

from robustbnn.bench_config import BenchConfig
from robustbnn.reproduce.experiment import Compare, Experiment, Run, compares_from_table
from robustbnn.reproduce.registry import EXPERIMENTS

COLUMNS = {"A": 800, "B": 1200}
COUPLINGS = (0, 8, 12)
# The launcher trains 200 epochs (launch_IAF_MNIST_MLP.py); ci trains 50, the length at
# which a faithful reimplementation matched the dropout row on this CPU (docs/protocols.md §8.5).
EPOCHS = {"full": 200, "ci": 50}
VARIANTS = {
    "paper": "two hidden layers of 800 / 1,200 units, as the paper's text says",
    "code": "one hidden layer, the code's default (--n_hiddens 1, not overridden by the launcher)",
}


def _hidden(units: int, variant: str) -> str:
    return f"({units},{units})" if variant == "paper" else f"({units},)"


def runs(budget: str, variant: str) -> tuple[Run, ...]:
    """Per column, one run of the baselines and one per coupling count."""
    base = dict(dataset="mnist", n_train=5000, n_val=0, s_eval=200, attacks=(), s_attack=(),
                eps=(), ood=(), targeted_steps=0)
    out = []
    for col, units in COLUMNS.items():
        net = (f"*.hidden={_hidden(units, variant)}", f"*.epochs={EPOCHS[budget]}")
        out.append(Run(f"{col}-base", BenchConfig(
            models=("mlp", "mc_dropout"),
            overrides=(*net, "mlp.init=glorot", "mc_dropout.init=glorot"), **base)))
        for k in COUPLINGS:
            out.append(Run(f"{col}-bhn{k}", BenchConfig(
                models=("bhn_realnvp",), overrides=(*net, f"bhn_realnvp.coupling={k}"), **base)))
    return tuple(out)


def _bind(entry):  # noqa: ANN001, ANN202 - an Entry -> (run, model)
    if entry.row == "dropout":
        return f"{entry.column}-base", "mc_dropout"
    return f"{entry.column}-bhn{entry.row.split()[1]}", "bhn_realnvp"


def compares(variant: str) -> tuple[Compare, ...]:
    """The published cells, then the MLP of each column (no published value)."""
    out = compares_from_table("bhn_table1_mnist5000", _bind)
    out += [Compare("MLP (not in the paper)", col, f"{col}-base", "mlp",
                    {"task": "clean", "metric": "accuracy"}) for col in COLUMNS]
    return tuple(out)


EXPERIMENTS.register("bhn_table1_mnist5000", Experiment(
    name="bhn_table1_mnist5000",
    title="BHN Table 1, MNIST 5,000: test accuracy (%)",
    reproduces="Krueger et al. 2017 (Bayesian Hypernetworks), Table 1, MNIST 5,000 (A), (B)",
    runs=runs,
    compares=compares,
    variants=VARIANTS,
    notes=(
        "Which depth produced Table 1 is not published: the text says two hidden layers, the "
        "code runs one; both are variants, and a run of either counts as the paper's protocol.",
        "The BHN rows use the code's q(g) init (LinearFlow log-scale −7, std ≈ 0.002). With "
        "the ci budget's 50 epochs, Adam moves the log-scales by at most lr per step, so q "
        "stays narrow and the BHN behaves close to its weight-normed point estimate.",
        "The paper trains with Adam, batch 128 (the code's default is 32, lr 1e-4).",
        "Measured at the ci budget, seed 0, both columns (150 min of cells on 2 shared CPU "
        "cores): dropout −0.11 (A) and −0.19 (B); BHN 0 +2.98 and +3.93, above the paper's "
        "BbB* (92.06, 90.91), which a plain MLP of the same net beats (95.40, 95.37 here); "
        "BHN 8 −0.15 and −1.71, BHN 12 −1.79 and −1.89 at 50 of the paper's 200 epochs (the "
        "flows' q(g) barely leaves its narrow init in 50 epochs).",
    ),
    gpu_estimate="200 epochs x 10 models x 3 seeds on 5,000 images with per-epoch validation "
                 "(20 samples on 10,000); estimated 1-1.5 h on one H100, not run (the ci budget's "
                 "50 epochs took 150 min of cells on 2 shared CPU cores).",
    data="MNIST (data root)",
))
