"""Fast gradient sign method on the Monte Carlo posterior predictive.

References:
    Goodfellow, Shlens & Szegedy, "Explaining and Harnessing Adversarial Examples",
    ICLR 2015, arXiv:1412.6572. As used by Krueger et al. 2017 (BHN §4.5: true label, 1 or 32
    posterior samples, no clipping in their code) and Li & Gal 2017 (§5.3: predicted label,
    10 samples, clipped to [0, 1]); docs/protocols.md §1.4 and §3.4.

Norm: L-infinity. Shapes: x (B, *), y (B,), target (B,) or int -> x_adv (B, *).

The papers' step-size grids and settings are named presets: ``EPS_GRIDS[p]`` and
``PRESETS[p]`` for ``p`` in ``"bhn"``, ``"ligal"``; :func:`fgsm_grid` combines them. Li & Gal's
cleverhans quirk (mean probabilities passed to the CE as if they were logits) is not
reproduced: the ``"predictive"`` objective is the CE of the predictive itself.

Example:
    >>> import torch
    >>> from robustbnn.models import MODELS
    >>> spec = MODELS.get("mlp")
    >>> model = spec.build(spec.config(), (1, 28, 28), 10, torch.Generator().manual_seed(0))
    >>> x, y = torch.rand(4, 1, 28, 28), torch.tensor([0, 1, 2, 3])
    >>> x_adv = FGSM(eps=0.1)(model, x, y)
    >>> bool((x_adv - x).abs().max() <= 0.1 + 1e-6), bool(x_adv.min() >= 0), x_adv.shape
    (True, True, torch.Size([4, 1, 28, 28]))
    >>> [a.eps for a in fgsm_grid("ligal")][:3], fgsm_grid("bhn")[0].clip
    ([0.0, 0.02, 0.04], False)
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import torch
from torch import Tensor

from robustbnn.attacks._grad import LABELS, GradientSettings, mc_input_grad
from robustbnn.attacks.base import Attack
from robustbnn.config import NON_NEGATIVE, POSITIVE_INT, OneOf, Range
from robustbnn.errors import UnknownNameError

__all__ = ["EPS_GRIDS", "FGSM", "LABELS", "PRESETS", "fgsm_grid"]

# Step sizes of the papers' FGSM figures (the clean eps = 0 run is separate in BHN).
EPS_GRIDS: dict[str, tuple[float, ...]] = {
    # BHN FGS_eval.evaluate [CODE], Krueger et al. 2017 Fig. 5 and Fig. 7
    "bhn": (0.001, 0.002, 0.003, 0.004, 0.005, 0.008, 0.01, 0.012, 0.015, 0.02, 0.025, 0.03,
            0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5),
    # Li & Gal adversarial_test.py: np.arange(0.0, 0.501, 0.02), 26 values [CODE]
    "ligal": tuple(round(0.02 * i, 2) for i in range(26)),
}

# The other FGSM settings of each paper (docs/protocols.md §1.4, §3.4). BHN's appendix (Fig. 7)
# uses n_samples=32, its main text 1.
PRESETS: dict[str, dict[str, Any]] = {
    "bhn": {"n_samples": 1, "objective": "predictive", "label": "true", "clip": False},
    "ligal": {"n_samples": 10, "objective": "predictive", "label": "predicted", "clip": True},
}


@dataclasses.dataclass(frozen=True)
class FGSM(Attack):
    """FGSM: x_adv = x + eps * sign(grad_x CE(p̄(x), label)); targeted: - grad CE(target).

    Attributes:
        eps: Step size (L-infinity radius).
        n_samples: S_attack, posterior samples in the gradient estimate.
        objective: ``"predictive"`` (papers) or ``"expected"`` (EOT).
        label: ``"true"`` (BHN) or ``"predicted"`` (Li & Gal; avoids label leaking), the
            argmax of the predictive of the same S_attack draws as the gradient.
        clip: Clip to [0, 1] (Li & Gal); BHN's code did not clip.
    """

    eps: float
    n_samples: int = 1
    objective: str = "predictive"
    label: str = "true"
    clip: bool = True

    norm: ClassVar[str] = "linf"
    reference: ClassVar[str] = "Goodfellow, Shlens & Szegedy 2015, arXiv:1412.6572"
    ranges: ClassVar[dict[str, Range | OneOf]] = {
        "eps": NON_NEGATIVE, "n_samples": POSITIVE_INT,
        "objective": OneOf(("predictive", "expected")), "label": OneOf(LABELS)}

    @property
    def gradient(self) -> GradientSettings:
        """The MC gradient this attack steps along (S_attack, objective, label policy)."""
        return GradientSettings(self.n_samples, self.objective, self.label)

    def direction(self, model: torch.nn.Module, x: Tensor, y: Tensor, *,
                  target: Tensor | int | None = None,
                  generator: torch.Generator | None = None) -> Tensor:
        """sign of the MC input gradient, shape of ``x``; it does not depend on ``eps``."""
        return mc_input_grad(model, x, y, self.gradient, target=target,
                             generator=generator).sign()

    def perturb(self, x: Tensor, direction: Tensor) -> Tensor:
        """``x + eps * direction``, clipped to [0, 1] when ``clip``: one step of size ``eps``
        along a :meth:`direction` (which serves every eps of a grid)."""
        x_adv = x.detach() + self.eps * direction
        return x_adv.clamp(0.0, 1.0) if self.clip else x_adv

    def __call__(self, model: torch.nn.Module, x: Tensor, y: Tensor, *,
                 target: Tensor | int | None = None,
                 generator: torch.Generator | None = None) -> Tensor:
        """Return adversarial inputs, shape of ``x``.

        Args:
            model: A registry model (``sample_logits`` contract), checked at the call.
            x: Inputs in [0, 1], shape (B, *).
            y: True labels, shape (B,).
            target: Target class, shape (B,) or one int; ``None`` = untargeted.
            generator: Source of the attack's posterior samples.
        """
        return self.perturb(x, self.direction(model, x, y, target=target, generator=generator))


def fgsm_grid(preset: str, **changes: Any) -> list[FGSM]:
    """One :class:`FGSM` per step size of a paper's grid, with that paper's settings.

    Args:
        preset: ``"bhn"`` or ``"ligal"``.
        **changes: Overrides of the preset's fields, e.g. ``n_samples=32`` for BHN Fig. 7.

    Raises:
        UnknownNameError: A ``KeyError`` for an unknown preset, listing the known ones.
    """
    if preset not in EPS_GRIDS:
        raise UnknownNameError("FGSM preset", preset, list(EPS_GRIDS))
    return [FGSM(eps=eps, **{**PRESETS[preset], **changes}) for eps in EPS_GRIDS[preset]]
