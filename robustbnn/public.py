"""What robustbnn promises plug-in authors: the public names, and the old forms still accepted.

:data:`PUBLIC` is the one list of the names a plug-in or a script may rely on, by section, each
as its import path; docs/api/public.md shows the same list and ``tests/attacks/
test_public_api.py`` holds the two equal. A name that is not in it (a module's other
functions, anything under a leading underscore, a module's ``__all__`` beyond this list) is
internal and may change in any release.

A public name changes only with a deprecation path of at least one release: the old form keeps
working and warns with :class:`RobustbnnDeprecationWarning`, naming the new form and the release
that removes the old one (:data:`DEPRECATED`). The warning is a ``FutureWarning``, which Python
shows by default, so a plug-in's author sees it on the first run of ``robustbnn bench`` or
``check``, in the main process and in every worker, once per calling line in each.

This module imports nothing of robustbnn: it is data, read by the modules that keep the old
forms and by the test.
"""

from __future__ import annotations

import dataclasses
import warnings

__all__ = ["DEPRECATED", "PUBLIC", "REMOVED_IN", "Deprecation", "RobustbnnDeprecationWarning",
           "warn_deprecated"]

PUBLIC: dict[str, tuple[str, ...]] = {
    "Package": ("robustbnn.__version__", "robustbnn.MODELS", "robustbnn.ATTACKS",
                "robustbnn.UNCERTAINTIES", "robustbnn.DATASETS"),
    "The model contract": (
        "robustbnn.contract.types.BayesianClassifier",
        "robustbnn.contract.types.check_sample_logits",
        "robustbnn.contract.types.attack_samples",
        "robustbnn.contract.checked.Checked",
        "robustbnn.contract.checked.checked",
        "robustbnn.contract.rng.seeded_global",
    ),
    "Models": (
        "robustbnn.models.MODELS",
        "robustbnn.models.ModelSpec",
        "robustbnn.models.BayesianModule",
        "robustbnn.config.TrainConfig",
        "robustbnn.config.Range",
        "robustbnn.config.OneOf",
        "robustbnn.config.POSITIVE_INT",
        "robustbnn.config.NON_NEGATIVE",
        "robustbnn.config.POSITIVE",
        "robustbnn.config.PROBABILITY",
    ),
    "Registries and plug-in loading": (
        "robustbnn.registry.Registry",
        "robustbnn.plugins.GROUPS",
        "robustbnn.plugins.load_plugins",
    ),
    "Attacks": (
        "robustbnn.attacks.ATTACKS",
        "robustbnn.attacks.base.Attack",
        "robustbnn.attacks.GradientSettings",
        "robustbnn.attacks.mc_input_grad",
        "robustbnn.attacks.mc_loss",
        "robustbnn.attacks.attack_labels",
        "robustbnn.attacks.budget.check_budget",
    ),
    "Uncertainty measures": (
        "robustbnn.ood.UNCERTAINTIES",
        "robustbnn.ood.Measure",
    ),
    "OOD sets and datasets": (
        "robustbnn.data.ood_sets.OOD_DATASETS",
        "robustbnn.data.ood_sets.OODSpec",
        "robustbnn.data.DATASETS",
        "robustbnn.data.Split",
    ),
    "Suites": (
        "robustbnn.suites.SUITES",
        "robustbnn.bench_config.BenchConfig",
    ),
    "Contract kits": (
        "robustbnn.testing.check_model",
        "robustbnn.testing.check_module",
        "robustbnn.testing.CheckOptions",
        "robustbnn.testing.CLAUSES",
        "robustbnn.testing.check_attack",
    ),
    "Errors": (
        "robustbnn.errors.UserError",
        "robustbnn.errors.ConfigError",
        "robustbnn.errors.ModelContractError",
    ),
}
"""Section title -> the public names in it, as import paths (``module.name``)."""

REMOVED_IN = "0.3.0"
"""The release that removes the old forms deprecated since the previous release (0.1.0)."""


@dataclasses.dataclass(frozen=True)
class Deprecation:
    """An old form of a public name that still works, warned.

    Attributes:
        old: The old call, as a plug-in of the previous release wrote it.
        new: The call that replaces it.
        removed_in: The release that removes the old form.
    """

    old: str
    new: str
    removed_in: str = REMOVED_IN


DEPRECATED: tuple[Deprecation, ...] = (
    Deprecation("mc_input_grad(model, x, y, n_samples=..., objective=..., label=..., name=...)",
                "mc_input_grad(model, x, y, GradientSettings(n_samples, objective, label))"),
    Deprecation("attack_labels(model, x, y, label=..., n_samples=..., name=...)",
                "attack_labels(model, x, y, GradientSettings(n_samples, label=label))"),
    Deprecation("check_model(name, device=..., input_shape=..., num_classes=..., batch=..., "
                "n_samples=...)",
                "check_model(name, options=CheckOptions(device=..., input_shape=..., ...))"),
)
"""Every old form still accepted, with its replacement and the release that removes it."""


class RobustbnnDeprecationWarning(FutureWarning):
    """An old form of a public robustbnn name: it still works, until the release named."""


def warn_deprecated(old: str, new: str, *, note: str = "", stacklevel: int = 3) -> None:
    """Warn that ``old`` is deprecated, naming ``new`` and :data:`REMOVED_IN`.

    Args:
        old: The call as it was made.
        new: The call to make instead.
        note: What else changed, for the message (empty: nothing).
        stacklevel: Frames up to the caller's line (3: the caller of the function that warns).
    """
    also = f"; {note}" if note else ""
    warnings.warn(f"{old} is deprecated and goes away in robustbnn {REMOVED_IN}: call {new} "
                  f"instead{also} (docs/api/public.md)", RobustbnnDeprecationWarning,
                  stacklevel=stacklevel)
