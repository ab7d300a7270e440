"""``bhn_fig5`` and ``bhn_fig7``: BHN's FGS, 1- and 32-sample gradients (docs/protocols.md §1.4).

``FGS_eval.evaluate`` on the full MNIST test set: x + ε·sign(∇ CE(p̄(x), y_true)), no
clipping, the 20-step ε grid, the gradient of the predictive from 1 (Fig. 5) or 32 (Fig. 7)
samples, scored with 20 fresh samples. The papers print only plots, so the report has our
curves and a few of their points, with no published numbers to compare.
"""

from __future__ import annotations

from robustbnn.bench_config import BenchConfig
from robustbnn.reproduce.experiment import Compare, Experiment, Figure, Run
from robustbnn.reproduce.registry import EXPERIMENTS

GRID = (0.001, 0.002, 0.003, 0.004, 0.005, 0.008, 0.01, 0.012, 0.015, 0.02, 0.025, 0.03, 0.04,
        0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5)  # FGS_eval.py [CODE]
MODELS = ("bhn_iaf", "bhn_realnvp", "mc_dropout")
EPOCHS = {"full": 200, "ci": 20}
VARIANTS = {
    "code": "the code's default primary net, one hidden layer of 200 units",
    "paper": "two hidden layers of 800 units (the MNIST nets of §4.2)",
}


def _runs(s_attack: int):  # noqa: ANN202
    def runs(budget: str, variant: str) -> tuple[Run, ...]:
        hidden = "(200,)" if variant == "code" else "(800,800)"
        return (Run("main", BenchConfig(
            dataset="mnist", models=MODELS, s_eval=20, s_attack=(s_attack,), eps=GRID,
            attack_objective="predictive", attack_label="true", attack_clip=False,
            attacks=("fgsm",), ood=(), targeted_steps=0, n_sanity=1000,
            overrides=(f"*.hidden={hidden}", f"*.epochs={EPOCHS[budget]}",
                       "mc_dropout.init=glorot"))),)
    return runs


def _compares(s_attack: int):  # noqa: ANN202
    def compares(variant: str) -> tuple[Compare, ...]:
        return tuple(
            Compare(model, f"{what} ε={eps:g}", "main", model,
                    {"task": "fgsm", "metric": metric, "measure": measure,
                     "setting.eps": eps, "setting.S_attack": s_attack})
            for model in MODELS
            for eps in (0.1, 0.3)
            for what, metric, measure in (("accuracy", "accuracy", ""),
                                          ("detection AUROC (entropy)", "adversary_detection",
                                           "predictive_entropy")))
    return compares


def _figures(s: int) -> tuple[Figure, ...]:
    where = {"S_attack": s}
    return (
        Figure("accuracy", f"FGS accuracy, {s}-sample gradient, unclipped", "fgsm", "accuracy",
               "eps", where=where),
        Figure("entropy", f"mean predictive entropy of x_adv ({s}-sample gradient)", "fgsm",
               "mean_uncertainty", "eps", measure="predictive_entropy", where=where),
        Figure("detection", f"adversary-detection AUROC by entropy ({s}-sample gradient)",
               "fgsm", "adversary_detection", "eps", measure="predictive_entropy", where=where),
        Figure("error_detection", f"error-detection AUROC by entropy ({s}-sample gradient)",
               "fgsm", "error_detection", "eps", measure="predictive_entropy", where=where),
    )


for _name, _fig, _s in (("bhn_fig5", "Fig. 5", 1), ("bhn_fig7", "Fig. 7", 32)):
    EXPERIMENTS.register(_name, Experiment(
        name=_name,
        title=f"BHN {_fig}: FGS with {_s}-sample gradients (accuracy, uncertainty, detection)",
        reproduces=f"Krueger et al. 2017 (Bayesian Hypernetworks), {_fig}",
        runs=_runs(_s), compares=_compares(_s), variants=VARIANTS, figures=_figures(_s),
        notes=("The paper prints only plots; the architecture and coupling count of the "
               "figure are not published (docs/protocols.md §1.4), so the code's default net "
               "runs.",),
        gpu_estimate="200 epochs x 3 models x 3 seeds on full MNIST plus 20 FGS steps sizes "
                     f"on 10,000 images with {_s}-sample gradients; about 30 min on one H100.",
    ))
