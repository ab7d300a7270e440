"""Named bench suites: printable, frozen configs (``robustbnn bench --suite NAME --print-config``)."""

from __future__ import annotations

import dataclasses

from robustbnn.registry import Registry


@dataclasses.dataclass(frozen=True)
class BenchConfig:
    """Everything a bench run does, apart from where files live and which device it uses.

    ``overrides`` are ``name.field=value`` strings applied to model configs; ``*`` as the name
    applies to every model that has the field.
    """

    dataset: str = "mnist5k"
    models: tuple[str, ...] = ("mlp", "mc_dropout")
    seed: int = 0
    overrides: tuple[str, ...] = ()
    n_train: int = 0  # 0 = the whole training split
    n_test: int = 0  # 0 = the whole test split
    s_eval: int = 100  # fresh posterior samples for every evaluation [BHN OOD: 100]
    s_attack: tuple[int, ...] = (1, 32)  # BHN Fig. 5 and Fig. 7
    eps: tuple[float, ...] = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)  # subset of BHN grid
    attack_objective: str = "predictive"  # CE of the MC predictive, as both papers
    attack_label: str = "true"  # BHN; Li & Gal use "predicted"
    attack_clip: bool = True  # keep x_adv in [0, 1]; BHN's code did not clip
    ood: tuple[str, ...] = ("uniform",)
    n_ood: int = 1000


SUITES: Registry[BenchConfig] = Registry("suite")

SUITES.register("default", BenchConfig())
SUITES.register(
    "smoke",
    BenchConfig(
        overrides=("*.hidden=(32,)", "*.epochs=10"),
        n_train=300,
        n_test=200,
        s_eval=20,
        s_attack=(1, 32),
        eps=(0.1, 0.3),
        n_ood=200,
    ),
)
