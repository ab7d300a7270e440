"""``vhn_fig3``: Kristiadi's FGSM curves (Fig. 3) and parameter counts (Table 1).

docs/protocols.md §2: 784-100-10 nets, batch 200, Adam, 20k iterations (80 epochs of our 50,000
training images), 100 posterior samples per prediction; FGSM as the CDN code ran it
(cleverhans FastGradientMethod: the predicted label, ε = 0.1, ..., 1.0, clipped to [0, 1],
the first 1,000 test images, one sample per gradient). The same models are attacked twice:
with the cross-entropy of the predictive (the paper's) and with the Carlini–Wagner logit
margin, which does not saturate where the softmax rounds to one-hot (``objective="cw"``).
Table 1's counts come from a separate run of the bias-free nets with a 30-unit hypernet.
"""

from __future__ import annotations

import dataclasses

from robustbnn.bench_config import BenchConfig
from robustbnn.reproduce.experiment import Compare, Experiment, Figure, Run, compares_from_table
from robustbnn.reproduce.registry import EXPERIMENTS

MODELS = ("mlp", "dropout", "mvn", "vhn")
EPS = tuple(round(0.1 * i, 1) for i in range(1, 11))
EPOCHS = {"full": 80, "ci": 20}


def runs(budget: str, variant: str) -> tuple[Run, ...]:
    """The FGSM runs (CE and CW objectives, same trained models) and the counting run."""
    attack = BenchConfig(
        dataset="mnist", models=MODELS, n_test=1000, s_eval=100, s_attack=(1,), eps=EPS,
        attack_objective="predictive", attack_label="predicted", attack_clip=True,
        attacks=("fgsm",), ood=(), n_sanity=500,
        overrides=("*.hidden=(100,)", "*.batch_size=200", f"*.epochs={EPOCHS[budget]}"))
    counts = BenchConfig(
        dataset="mnist", models=("mlp", "mvn", "vhn"), n_test=1000, s_eval=1, attacks=(),
        s_attack=(), eps=(), ood=(),
        overrides=("*.hidden=(100,)", "*.epochs=1", "mvn.bias=False", "vhn.bias=False",
                   "vhn.hyper_hidden=30"))
    return (Run("ce", attack), Run("cw", dataclasses.replace(attack, attack_objective="cw")),
            Run("counts", counts))


def compares(variant: str) -> tuple[Compare, ...]:
    """Table 1's counts, then FGSM accuracy and the zero-gradient check per objective."""
    out = compares_from_table(
        "vhn_table1", lambda e: ("counts", {"Vanilla & Dropout": "mlp", "MVN": "mvn",
                                            "Hypernet with vector scaling": "vhn"}[e.row]))
    for run in ("ce", "cw"):
        for model in MODELS:
            out += [Compare(model, f"{run}: FGSM accuracy ε={eps:g}", run, model,
                            {"task": "fgsm", "metric": "accuracy", "setting.eps": eps})
                    for eps in (0.1, 0.3, 0.5)]
            out.append(Compare(model, f"{run}: share of nonzero input gradients", run, model,
                               {"task": "fgsm_sanity", "measure": "gradient_nonzero",
                                "metric": "value"}))
    return tuple(out)


EXPERIMENTS.register("vhn_fig3", Experiment(
    name="vhn_fig3",
    title="Variational hypernetwork: FGSM accuracy and entropy (Kristiadi Fig. 3, Table 1)",
    reproduces="Kristiadi 2018 (variational hypernetworks), Fig. 3 and Table 1",
    runs=runs,
    compares=compares,
    variants={"code": "the CDN code's FGSM, attacked with CE and with the CW margin"},
    figures=(
        Figure("accuracy_ce", "FGSM accuracy, CE of the predictive (the paper's)", "fgsm",
               "accuracy", "eps", where={"objective": "predictive"}),
        Figure("accuracy_cw", "FGSM accuracy, Carlini–Wagner margin", "fgsm", "accuracy", "eps",
               where={"objective": "cw"}),
        Figure("entropy_ce", "mean predictive entropy of x_adv (CE attack)", "fgsm",
               "mean_uncertainty", "eps", measure="predictive_entropy",
               where={"objective": "predictive"}),
    ),
    notes=(
        "Fig. 3 and Table 1 are the only numbers of the note: the curves are plots, the counts "
        "a table. Our MLP and MVN carry biases in the attack runs; the counting run drops them "
        "where the model allows (mvn, vhn), and our mlp has no bias-free option, so its count "
        "is a reference.",
        "λ for Fig. 3 is not published; the CDN code's default 1e-5 runs.",
        "Where saturated logits come from (measured on mnist5k, seed 0, 20 posterior samples "
        "of the first 500 test points, scripts/vhn_saturation.py): with the CDN "
        "code's settings (20 epochs) the largest logit is 73 and no point has a zero CE "
        "gradient (accuracy 0.852); with the default suite's quick budget (log-variance "
        "shift −3, lr 0.003, 50 epochs) logits reach 530, 2.3% of the points have a top-two "
        "gap above 88 (where float32 exp underflows) and 1.8% an input gradient of exactly "
        "zero under CE, none under the CW margin; λ = 1e-2 gives 0.262 accuracy at 20 "
        "epochs. The saturation is the training budget's (narrow initial variances let the "
        "mean matrices grow while λ = 1e-5 barely penalises them), not the method's.",
        "Under the paper's settings (ci budget, seed 0) no input gradient is zero and the "
        "hypernetwork is not more robust than its baselines: FGSM accuracy at ε = 0.1 is "
        "22.8% (CE) / 21.9% (CW) for vhn against 69.4% / 67.2% for MVN and 4.5% / 3.3% for "
        "the MLP. The note's 'significantly more robust' is what a saturated CE gradient "
        "shows (the default suite's vhn, 0.09-0.10 at ε = 0.3); the CW margin removes it.",
    ),
    gpu_estimate="80 epochs x 4 models x 3 seeds on 784-100-10 nets: minutes on one GPU; the "
                 "ci budget (20 epochs) already runs on CPU.",
))
