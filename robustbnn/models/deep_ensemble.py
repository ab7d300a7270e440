"""Deep ensembles: M independently initialised and trained MLPs, predicted as a uniform mixture.

Lakshminarayanan, Pritzel & Blundell 2017, "Simple and Scalable Predictive Uncertainty
Estimation using Deep Ensembles" (NeurIPS, arXiv:1612.01474); the baseline to beat under
dataset shift in Ovadia et al. 2019 (arXiv:1906.02530). Each member is the registry's ``mlp``
(same config, same training), initialised from its own draws and trained from its own random
stream (shuffling), one after the other through ``ModelSpec.fit``, each cached as it finishes.
As in Ovadia et al., members train by NLL alone; the paper's optional adversarial training
is not used.

A posterior sample is a member: ``sample_logits(x, S)`` draws members stratified, every member
``S // M`` times and ``S % M`` distinct members for the rest, in random order. When S is a
multiple of M every member appears equally often, so the MC predictive is exactly the ensemble
average; for other S it is an unbiased draw from the mixture with less variance than i.i.d.
picks.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from robustbnn.config import POSITIVE_INT, OneOf, Range
from robustbnn.data import DataBundle
from robustbnn.models.base import MODELS, SMOKE, BayesianModule, ModelSpec, PartTrainer
from robustbnn.models.mlp import DropoutMLP, MLEConfig, build_net


@dataclasses.dataclass(frozen=True)
class DeepEnsembleConfig(MLEConfig):
    """The ``mlp`` config of every member, and their number."""

    members: int = 5  # M [Lakshminarayanan et al. 2017 §3.5: "M = 5 in our experiments"]

    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "members": POSITIVE_INT,
    }


class DeepEnsemble(BayesianModule):
    """A uniform mixture of ``members`` networks.

    Args:
        members: The trained (or to-be-trained) member networks, each a deterministic
            :class:`~robustbnn.models.mlp.DropoutMLP`.
    """

    def __init__(self, members: list[DropoutMLP]) -> None:
        super().__init__()
        self.members = nn.ModuleList(members)
        self.num_classes = members[0].num_classes

    def member_logits(self, x: Tensor, members: list[int] | None = None) -> Tensor:
        """The logits of ``members`` (default: all), shape (len(members), B, C)."""
        chosen = range(len(self.members)) if members is None else members
        return torch.stack([self.members[i].sample_logits(x, 1)[0] for i in chosen])

    def sample_logits(
        self, x: Tensor, n_samples: int, *, generator: torch.Generator | None = None
    ) -> Tensor:
        """Logits of ``n_samples`` members drawn stratified, shape (S, B, C)."""
        m = len(self.members)
        device = generator.device if generator is not None else x.device
        rounds, rest = divmod(n_samples, m)
        pick = torch.arange(m, device=device).repeat(rounds)
        if rest:
            pick = torch.cat([pick, torch.randperm(m, generator=generator, device=device)[:rest]])
        pick = pick[torch.randperm(n_samples, generator=generator, device=device)].tolist()
        used = sorted(set(pick))
        logits = self.member_logits(x, used)  # (U, B, C)
        slot = {member: j for j, member in enumerate(used)}
        return logits[[slot[i] for i in pick]]  # (S, B, C)

    def loss(
        self,
        x: Tensor,
        y: Tensor,
        *,
        n_train: int,
        generator: torch.Generator | None = None,
        batch: tuple[int, int] = (0, 1),
    ) -> Tensor:
        """The members' NLLs summed: joint training of independent members on shared
        minibatches, for callers of :func:`robustbnn.training.fit.fit` on the whole ensemble (the
        bench trains each member on its own stream through :func:`fit_members`)."""
        logits = self.member_logits(x)  # (M, B, C)
        return sum(F.cross_entropy(member, y) for member in logits)


def build_deep_ensemble(cfg: DeepEnsembleConfig, input_shape: tuple[int, ...],
                        num_classes: int, generator: torch.Generator | None) -> DeepEnsemble:
    """Build ``cfg.members`` MLPs, each initialised from the next draws of ``generator``."""
    if cfg.members < 1:
        raise ValueError(f"deep_ensemble: members must be >= 1, got {cfg.members}")
    return DeepEnsemble([build_net(cfg, input_shape, num_classes, generator)
                         for _ in range(cfg.members)])


def fit_members(model: DeepEnsemble, cfg: DeepEnsembleConfig, data: DataBundle,
                trainer: PartTrainer) -> dict[str, Any]:
    """Train the members one by one, each from its own stream, each cached when done."""
    reports = [trainer.fit(member, cfg, tag=f"member{i}", stochastic=False)
               for i, member in enumerate(model.members)]
    return {"members": reports, "seconds": sum(r.get("seconds", 0.0) for r in reports)}


MODELS.register(
    "deep_ensemble",
    ModelSpec(
        build=build_deep_ensemble,
        config=DeepEnsembleConfig,
        description="Deep ensemble of 5 MLE MLPs, independently initialised and trained",
        reference="Lakshminarayanan et al. 2017 (NeurIPS); Ovadia et al. 2019",
        stochastic=True,
        family="ensemble & post-hoc",
        shrink={"smoke": {**SMOKE, "members": 3}},
        fit=fit_members,
    ),
)
