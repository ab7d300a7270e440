"""The one Monte Carlo input gradient every attack uses, with the shared label policy.

Two objectives differ for stochastic models (docs/pitfalls.md §1.2), so both are named:

* ``"predictive"``: CE of the posterior predictive, -log (1/S) sum_s softmax(f_s(x))_y, computed
  with logsumexp. This is what the BHN (``FGS_eval.fgm_grad2``) and Li & Gal
  (``loading_utils.MC_dropout``) codes differentiate.
* ``"expected"``: (1/S) sum_s CE(f_s(x), y), the EOT gradient of torchattacks/AutoAttack.
* ``"cw"``: the Carlini–Wagner margin on logits, (1/S) sum_s [max_{j≠y} f_s(x)_j − f_s(x)_y]
  (Carlini & Wagner 2017, arXiv:1608.04644). A softmax with a top-two logit gap above ~100
  rounds to one-hot in float32, so the CE's gradient underflows to exactly zero; the margin
  is linear in the logits and never saturates (docs/pitfalls.md §1.8).
* ``"dlr"``: the difference-of-logits ratio, (1/S) sum_s DLR(f_s(x), y), the CW margin divided
  by z_π1 − z_π3 so it is also scale-invariant (Croce & Hein 2020, arXiv:2003.01690;
  :mod:`robustbnn.attacks.margin`, which says why per-sample logits).

Which class the loss is about is the label policy, shared by every attack:

* untargeted, ``label="true"``: ascend CE of the given labels (BHN);
* untargeted, ``label="predicted"``: ascend CE of argmax p̄(x), the MC prediction (Li & Gal,
  cleverhans ``fgsm``; avoids label leaking, Kurakin et al. 2017, arXiv:1611.01236);
* targeted (``target`` given): descend CE of the target class, i.e. ascend log p̄(target | x)
  (``"predictive"``) or (1/S) sum_s log p_s(target | x) (``"expected"``); ``label`` is unused.

:func:`mc_input_grad` returns the gradient of the quantity to **ascend** in every case, so an
attack step is always ``x + step * sign(grad)``.

Losses are summed over the batch so a gradient does not scale with the batch size. Nothing
here switches the module mode: randomness comes only from ``sample_logits`` and the
``generator`` passed to it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from robustbnn.attacks.margin import dlr_loss
from robustbnn.contract.checked import Checked, checked
from robustbnn.metrics.classification import log_predictive_probs
from robustbnn.public import warn_deprecated

OBJECTIVES = ("predictive", "expected", "cw", "dlr")
LABELS = ("true", "predicted")


def check_options(objective: str | None = None, label: str | None = None) -> None:
    """Raise ``ValueError`` for an unknown objective or label policy (``None`` = not checked)."""
    if objective is not None and objective not in OBJECTIVES:
        raise ValueError(f"unknown attack objective {objective!r}; known: {list(OBJECTIVES)}")
    if label is not None and label not in LABELS:
        raise ValueError(f"unknown label policy {label!r}; known: {list(LABELS)}")


def mc_loss(logits: Tensor, y: Tensor, objective: str, *, reduction: str = "sum") -> Tensor:
    """The loss of labels ``y`` (B,) under sampled ``logits`` (S, B, C): CE, the CW margin or
    the DLR.

    ``reduction="sum"`` gives a scalar; ``"none"`` gives one loss per example, shape (B,).
    """
    n_samples = logits.shape[0]
    if objective == "predictive":
        return F.nll_loss(log_predictive_probs(logits), y, reduction=reduction)
    if objective == "expected":
        flat = logits.reshape(-1, logits.shape[-1])  # (S*B, C)
        per = F.cross_entropy(flat, y.repeat(n_samples), reduction="none")  # (S*B,)
        per = per.reshape(n_samples, -1).mean(0)  # (B,)
        return per.sum() if reduction == "sum" else per
    if objective == "cw":
        true = logits.gather(-1, y.expand(n_samples, -1).unsqueeze(-1)).squeeze(-1)  # (S, B)
        others = logits.scatter(-1, y.expand(n_samples, -1).unsqueeze(-1), float("-inf"))
        per = (others.amax(-1) - true).mean(0)  # (B,)
        return per.sum() if reduction == "sum" else per
    if objective == "dlr":
        return dlr_loss(logits, y, reduction=reduction)
    raise ValueError(f"unknown attack objective {objective!r}; known: {list(OBJECTIVES)}")


def predicted_labels(logits: Tensor) -> Tensor:
    """argmax of the MC predictive p̄ = mean_s softmax(logits_s), shape (B,), no gradient."""
    return torch.softmax(logits.detach(), dim=-1).mean(0).argmax(-1)


def as_target(target: Tensor | int, x: Tensor) -> Tensor:
    """A target class per example, shape (B,), on ``x``'s device (an int is broadcast)."""
    if isinstance(target, Tensor):
        return target.to(device=x.device, dtype=torch.long).expand(x.shape[0])
    return torch.full((x.shape[0],), int(target), dtype=torch.long, device=x.device)


def attack_objective(
    logits: Tensor,
    y: Tensor,
    *,
    objective: str,
    label: str = "true",
    target: Tensor | int | None = None,
    reduction: str = "sum",
) -> Tensor:
    """The quantity an attack ascends, from sampled ``logits`` (S, B, C).

    Untargeted: CE of ``y`` (``label="true"``) or of :func:`predicted_labels` of the same
    logits (``label="predicted"``). Targeted: minus the CE of ``target``.
    """
    check_options(objective, label)
    if target is not None:
        return -mc_loss(logits, as_target(target, y), objective, reduction=reduction)
    if label == "predicted":
        y = predicted_labels(logits)
    return mc_loss(logits, y, objective, reduction=reduction)


@dataclasses.dataclass(frozen=True)
class GradientSettings:
    """What one Monte Carlo input gradient estimates (:func:`mc_input_grad`).

    Attributes:
        n_samples: S_attack, the posterior samples in the estimate.
        objective: ``"predictive"``, ``"expected"``, ``"cw"`` or ``"dlr"`` (see the module
            docstring).
        label: ``"true"`` or ``"predicted"``: the class an untargeted attack moves away from.

    Raises:
        ValueError: For ``n_samples < 1``, an unknown ``objective`` or ``label``.
    """

    n_samples: int
    objective: str = "predictive"
    label: str = "true"

    def __post_init__(self) -> None:
        check_options(self.objective, self.label)
        if self.n_samples < 1:
            raise ValueError(f"need n_samples >= 1, got {self.n_samples}")


# The keywords each function took before GradientSettings (the previous release), still accepted
# with a warning until robustbnn.public.REMOVED_IN (docs/api/public.md).
_OLD_KEYWORDS = {"mc_input_grad": ("n_samples", "objective", "label", "name"),
                 "attack_labels": ("label", "n_samples", "name")}


def _settings_of(function: str, settings: GradientSettings | None,
                 old: dict[str, Any]) -> GradientSettings:
    """``settings``, or the :class:`GradientSettings` of the previous release's keywords, warned
    (``name=`` is dropped: contract errors name a model by its registry name or class)."""
    if not old:
        if settings is None:
            raise TypeError(f"{function}() is missing its settings: call {function}(model, x, "
                            "y, GradientSettings(n_samples=...), ...)")
        return settings
    unknown = [k for k in old if k not in _OLD_KEYWORDS[function]]
    if unknown:
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}")
    if settings is not None:
        raise TypeError(f"{function}() takes either settings or the old keywords "
                        f"{sorted(old)}, not both")
    required = [k for k in ("n_samples", "label" if function == "attack_labels" else "")
                if k and k not in old]
    if required:
        raise TypeError(f"{function}() missing required keyword argument {required[0]!r}")
    fields = {k: old[k] for k in ("n_samples", "objective", "label") if k in old}
    given = ", ".join(f"{k}={v!r}" for k, v in old.items())
    args = ", ".join(f"{k}={v!r}" for k, v in fields.items())
    note = ("name= is no longer needed: contract errors name a model by its registry name or "
            "class") if "name" in old else ""
    warn_deprecated(f"{function}(model, x, y, {given})",
                    f"{function}(model, x, y, GradientSettings({args}), ...)", note=note,
                    stacklevel=4)
    return GradientSettings(**fields)


def _sample(model: Checked, x: Tensor, n_samples: int,
            generator: torch.Generator | None) -> Tensor:
    """The model's attack samples (``attack_logits`` where it has them, else
    ``sample_logits``, :func:`robustbnn.contract.types.attack_samples`), (S, B, C), checked
    once, by the :class:`~robustbnn.contract.checked.Checked` wrapper."""
    return model.attack_logits(x, n_samples, generator=generator)


def mc_input_grad(
    model: torch.nn.Module,
    x: Tensor,
    y: Tensor,
    settings: GradientSettings | None = None,
    *,
    target: Tensor | int | None = None,
    generator: torch.Generator | None = None,
    **old: Any,
) -> Tensor:
    """Gradient with respect to the input of the MC attack objective (the quantity to ascend).

    One call draws ``settings.n_samples`` posterior samples from ``generator``. With
    ``label="predicted"`` the label is the argmax of the predictive of those same draws, as in
    Li & Gal's graph, where cleverhans took the label from the tensor it differentiated.

    Args:
        model: A registry model, checked at the call
            (:func:`~robustbnn.contract.checked.checked`).
        x: Inputs in [0, 1], shape (B, *).
        y: True labels, shape (B,); unused when ``label="predicted"`` or ``target`` is given.
        settings: S_attack, the objective and the label policy.
        target: Target class per example, shape (B,), or one int; ``None`` = untargeted.
        generator: Source of the attack's posterior samples.
        **old: The previous release's ``n_samples=``, ``objective=``, ``label=`` and ``name=``
            in place of ``settings``: deprecated, they work until the release
            :data:`robustbnn.public.REMOVED_IN` and warn with a
            :class:`~robustbnn.public.RobustbnnDeprecationWarning`.

    Returns:
        d objective / d x, shape (B, *): +grad CE(label) untargeted, +grad log p̄(target)
        targeted.

    Raises:
        TypeError: Without settings, with settings and old keywords both, or with an
            unknown keyword.

    Example:
        >>> import torch
        >>> from robustbnn.models import MODELS
        >>> spec = MODELS.get("mlp")
        >>> net = spec.build(spec.config(hidden=(16,)), (1, 28, 28), 10,
        ...                  torch.Generator().manual_seed(0))
        >>> x, y = torch.rand(2, 1, 28, 28), torch.tensor([3, 7])
        >>> mc_input_grad(net, x, y, GradientSettings(n_samples=4, objective="expected")).shape
        torch.Size([2, 1, 28, 28])
    """
    settings = _settings_of("mc_input_grad", settings, old)
    x = x.detach().requires_grad_(True)
    with torch.enable_grad():
        logits = _sample(checked(model), x, settings.n_samples, generator)  # (S, B, C)
        value = attack_objective(logits, y, objective=settings.objective, label=settings.label,
                                 target=target)
        (grad,) = torch.autograd.grad(value, x)
    return grad


def attack_labels(
    model: torch.nn.Module,
    x: Tensor,
    y: Tensor,
    settings: GradientSettings | None = None,
    *,
    generator: torch.Generator | None = None,
    **old: Any,
) -> Tensor:
    """Labels an iterative untargeted attack keeps fixed: ``y`` or the MC prediction on ``x``.

    Iterative attacks resolve ``label="predicted"`` once on the clean input (as cleverhans'
    ``BasicIterativeMethod`` does); re-predicting at every step would chase the adversarial
    class once the prediction flips. Draws ``settings.n_samples`` samples from ``generator``
    only when ``settings.label`` is ``"predicted"``. The previous release's ``label=``,
    ``n_samples=`` and ``name=`` in place of ``settings`` still work, warned, until the release
    :data:`robustbnn.public.REMOVED_IN` (as for :func:`mc_input_grad`).
    """
    settings = _settings_of("attack_labels", settings, old)
    if settings.label == "true":
        return y
    with torch.no_grad():
        return predicted_labels(_sample(checked(model), x, settings.n_samples, generator))


def mc_objective_per_example(
    model: torch.nn.Module,
    x: Tensor,
    y: Tensor,
    settings: GradientSettings,
    *,
    target: Tensor | int | None = None,
    generator: torch.Generator | None = None,
) -> Tensor:
    """The attack objective (CE of ``y``, or log p̄(target)) per example, shape (B,), no grad
    (``settings.label`` is not used: ``y`` is the label)."""
    with torch.no_grad():
        logits = _sample(checked(model), x, settings.n_samples, generator)
        return attack_objective(logits, y, objective=settings.objective, target=target,
                                reduction="none")
