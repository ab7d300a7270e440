"""Uncertainty measures: Monte Carlo probabilities and logits (S, B, C) -> scores (B,).

Every measure sees ``probs`` of shape (S, B, C), the softmax outputs of S posterior samples
(samples first, STYLE.md §2), and, when it asks for them, the ``logits`` (S, B, C) they came
from; it returns one score per example. **Higher always means more
uncertain** (more likely out-of-distribution), so every score can be fed unchanged to
:mod:`robustbnn.metrics.ranking`, where OOD is the positive class. Confidence-type quantities
are turned around inside (``max_prob`` is 1 - max mean probability, not the max itself).

With p_s the probabilities of sample s and p̄ = (1/S) Σ_s p_s (natural log, 0·log 0 = 0):

========================  ==================================================================
``max_prob``              1 - max_c p̄_c
``predictive_entropy``    H[p̄]
``expected_entropy``      (1/S) Σ_s H[p_s]
``bald``                  H[p̄] - (1/S) Σ_s H[p_s], the mutual information (BALD), ≥ 0
``mean_std``              (1/C) Σ_c std_s p_s,c, population std (ddof = 0)
``variation_ratio``       1 - f_mode / S, Gal's mode frequency of the per-sample argmax
``energy``                free energy of the predictive logits (:mod:`robustbnn.ood.energy`)
``mean_energy``           free energy averaged over samples
``max_logit``             minus the largest predictive logit
``mean_max_logit``        minus the largest logit, averaged over samples
========================  ==================================================================

What a measure receives. A registry entry is either a plain function of ``probs``, called as
``fn(probs)`` (what a plug-in measure written before logits were passed still is), or a
:class:`Measure` record, whose ``takes`` names the tensors ``fn`` gets, in order:
``("probs",)``, ``("logits",)`` or ``("probs", "logits")``; :func:`measure` turns either into
a :class:`Measure`, and ``Measure(probs, logits)`` calls it. The bench samples logits only
when a measure it computes asks for them, so the probability measures cost what they did.
A record may declare a ``version``: the bench scores plug-in measures (any registered after
the built-ins, :data:`BUILTIN_MEASURES`) in cells of their own whose ids hold the measure's
name and version, so registering a measure, or bumping its version, computes its rows only.

Naming clash, "variation ratio": the Bayesian hypernetwork papers and code (Krueger et al.
2017, Table 2 and ``acquisition_functions.py``) call 1 - max_c p̄_c the "variation ratio";
that is ``max_prob`` here. Gal (2016, §3.3) and torch-uncertainty define it as the mode
frequency 1 - f_mode / S of the per-sample predicted classes; that is ``variation_ratio``
here. The two agree only when every sample is one-hot (docs/protocols.md §5,
docs/pitfalls.md §1.10).

Inputs are assumed to be probability vectors over C; unlike BHN's ``scipy.stats.entropy`` the
entropies do not renormalise them. Nothing is detached: the differentiable measures pass
gradients back to ``probs`` (finite even where some p = 0), so adaptive attacks can target
them. ``variation_ratio`` is piecewise constant and returns a tensor without gradient.

References:
    Gal, "Uncertainty in Deep Learning", PhD thesis, 2016, §3.3.1.
    Krueger et al., "Bayesian Hypernetworks", 2017, https://arxiv.org/abs/1710.04759.
    Houlsby et al., "Bayesian Active Learning for Classification and Preference
    Learning", 2011, https://arxiv.org/abs/1112.5745.
    Liu, Wang, Owens & Li, "Energy-based Out-of-distribution Detection", NeurIPS 2020,
    https://arxiv.org/abs/2010.03759.
    Hendrycks et al., "Scaling Out-of-Distribution Detection for Real-World Settings",
    ICML 2022, https://arxiv.org/abs/1911.11132.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import torch
from torch import Tensor

from robustbnn.ood.energy import check_samples, energy, max_logit, mean_energy, mean_max_logit
from robustbnn.registry import Registry

UNCERTAINTIES = Registry[Callable[..., Tensor]]("uncertainty measure")
INPUTS = ("probs", "logits")


@dataclasses.dataclass(frozen=True)
class Measure:
    """An uncertainty measure with the inputs it needs.

    Attributes:
        fn: The score function, (S, B, C) tensors -> (B,), higher = more uncertain.
        takes: The tensors ``fn`` receives, in order, from :data:`INPUTS`.
        version: Bump it when ``fn`` changes its numbers: the bench recomputes a plug-in
            measure's cells when its version changes.
        reference: The paper or source the measure comes from (for people).

    Example:
        >>> m = Measure(lambda logits: -logits.amax(-1).mean(0), takes=("logits",))
        >>> m(torch.full((2, 1, 3), 1 / 3), torch.tensor([[[1.0, 2.0, 0.0]]] * 2))
        tensor([-2.])
    """

    fn: Callable[..., Tensor]
    takes: tuple[str, ...] = ("probs",)
    version: int = 0
    reference: str = ""

    def __post_init__(self) -> None:
        if not self.takes or set(self.takes) - set(INPUTS):
            raise ValueError(f"Measure.takes must name some of {list(INPUTS)}, got "
                             f"{self.takes!r}")

    @property
    def needs_logits(self) -> bool:
        """Whether the bench must keep the logit samples for this measure."""
        return "logits" in self.takes

    def __call__(self, probs: Tensor, logits: Tensor | None = None) -> Tensor:
        """Scores (B,) of ``probs`` (S, B, C) and, when the measure takes them, ``logits``.

        Raises:
            ValueError: If the measure takes logits and none are given.
        """
        if self.needs_logits and logits is None:
            raise ValueError("this measure needs the logit samples (S, B, C) as well: call it "
                             "as measure(probs, logits)")
        given = {"probs": probs, "logits": logits}
        return self.fn(*(given[name] for name in self.takes))


def measure(name: str) -> Measure:
    """The measure registered under ``name`` as a :class:`Measure` (a plain function of
    ``probs`` becomes ``Measure(fn)``).

    Raises:
        UnknownNameError: If ``name`` is not registered.
    """
    entry = UNCERTAINTIES.get(name)
    return entry if isinstance(entry, Measure) else Measure(entry)


def _entropy(p: Tensor) -> Tensor:
    """Entropy over the last axis; 0·log 0 = 0 with a zero (not NaN) gradient there."""
    # xlogy has a NaN gradient at p = 0; the masked log keeps both branches finite.
    tiny = torch.finfo(p.dtype).tiny
    plogp = torch.where(p > 0, p * p.clamp_min(tiny).log(), torch.zeros_like(p))
    return -plogp.sum(dim=-1)


def max_prob(probs: Tensor) -> Tensor:
    """One minus the largest mean probability, 1 - max_c p̄_c.

    The Bayesian hypernetwork papers call this the "variation ratio" (its confidence
    max_c p̄_c is Hendrycks & Gimpel's baseline); Gal's mode-frequency variation ratio is
    :func:`variation_ratio`.

    Args:
        probs: Per-sample class probabilities, shape (S, B, C).

    Returns:
        Scores in [0, 1 - 1/C], shape (B,); higher means more uncertain.

    Example:
        >>> probs = torch.tensor([[[0.9, 0.1]], [[0.5, 0.5]]])  # S=2, B=1, C=2
        >>> max_prob(probs)
        tensor([0.3000])
    """
    check_samples(probs, "probs")
    return 1 - probs.mean(dim=0).amax(dim=-1)


def predictive_entropy(probs: Tensor) -> Tensor:
    """Entropy of the mean prediction, H[p̄] = -Σ_c p̄_c log p̄_c (nats).

    Args:
        probs: Per-sample class probabilities, shape (S, B, C).

    Returns:
        Scores in [0, log C], shape (B,); higher means more uncertain.

    Example:
        >>> probs = torch.tensor([[[1.0, 0.0]], [[0.0, 1.0]]])
        >>> predictive_entropy(probs)  # log 2
        tensor([0.6931])
    """
    check_samples(probs, "probs")
    return _entropy(probs.mean(dim=0))


def expected_entropy(probs: Tensor) -> Tensor:
    """Mean entropy of the per-sample predictions, (1/S) Σ_s H[p_s] (aleatoric part).

    Args:
        probs: Per-sample class probabilities, shape (S, B, C).

    Returns:
        Scores in [0, log C], shape (B,); higher means more uncertain.

    Example:
        >>> probs = torch.tensor([[[1.0, 0.0]], [[0.5, 0.5]]])
        >>> expected_entropy(probs)  # (0 + log 2) / 2
        tensor([0.3466])
    """
    check_samples(probs, "probs")
    return _entropy(probs).mean(dim=0)


def bald(probs: Tensor) -> Tensor:
    """Mutual information between prediction and weights (BALD), H[p̄] - E_s H[p_s].

    Rounding can make the difference slightly negative; it is clamped at 0. Where all S
    samples are identical (a deterministic model, or a point where the posterior agrees
    exactly) the score is exactly 0: the two entropies round differently by up to ~1e-6,
    which would otherwise rank a deterministic model's inputs by float noise and give it
    a spurious detection AUROC away from 0.5.

    Args:
        probs: Per-sample class probabilities, shape (S, B, C).

    Returns:
        Scores in [0, log C], shape (B,); higher means more (epistemic) uncertainty.

    Example:
        >>> probs = torch.tensor([[[1.0, 0.0]], [[0.0, 1.0]]])  # two confident, disagreeing
        >>> bald(probs)
        tensor([0.6931])
    """
    check_samples(probs, "probs")
    mutual_information = (_entropy(probs.mean(dim=0)) - _entropy(probs).mean(dim=0)).clamp_min(0)
    samples_agree = (probs == probs[:1]).all(dim=-1).all(dim=0)  # (B,)
    return torch.where(samples_agree, torch.zeros_like(mutual_information), mutual_information)


def mean_std(probs: Tensor) -> Tensor:
    """Class-averaged standard deviation over samples, (1/C) Σ_c std_s p_s,c (ddof = 0).

    Args:
        probs: Per-sample class probabilities, shape (S, B, C).

    Returns:
        Scores in [0, 0.5], shape (B,); higher means more uncertain.

    Example:
        >>> probs = torch.tensor([[[1.0, 0.0]], [[0.0, 1.0]]])
        >>> mean_std(probs)
        tensor([0.5000])
    """
    check_samples(probs, "probs")
    return probs.std(dim=0, correction=0).mean(dim=-1)


def variation_ratio(probs: Tensor) -> Tensor:
    """Gal's variation ratio, 1 - f_mode / S, with f_mode the count of the modal class.

    Each sample votes for its argmax class (torch's argmax breaks ties towards the lower
    class index); f_mode is the number of votes of the most voted class. The result is
    piecewise constant in ``probs`` and carries no gradient. Not the BHN "variation ratio",
    which is :func:`max_prob`.

    Args:
        probs: Per-sample class probabilities, shape (S, B, C).

    Returns:
        Scores in [0, 1 - 1/min(S, C)], shape (B,), dtype of ``probs``; higher means more
        uncertain.

    Example:
        >>> probs = torch.tensor([[[0.9, 0.1]], [[0.6, 0.4]], [[0.2, 0.8]], [[0.7, 0.3]]])
        >>> variation_ratio(probs)  # votes 0, 0, 1, 0: mode count 3 of 4
        tensor([0.2500])
    """
    check_samples(probs, "probs")
    num_samples, _, num_classes = probs.shape
    votes = torch.nn.functional.one_hot(probs.argmax(dim=-1), num_classes)  # (S, B, C)
    mode_count = votes.sum(dim=0).amax(dim=-1)  # (B,)
    return 1 - mode_count.to(probs.dtype) / num_samples


def all_measures(probs: Tensor, logits: Tensor | None = None, *,
                 names: tuple[str, ...] | list[str] | None = None) -> dict[str, Tensor]:
    """Measures ``names`` (default: every registered one, in registration order).

    Args:
        probs: Per-sample class probabilities, shape (S, B, C).
        logits: The logits they came from, shape (S, B, C); needed by logit measures.
        names: The measures to compute.

    Returns:
        A dict from measure name to scores of shape (B,).

    Raises:
        ValueError: If ``probs`` is not 3-D, or a measure needs logits and none are given.

    Example:
        >>> logits = torch.zeros(3, 5, 7)
        >>> scores = all_measures(torch.softmax(logits, -1), logits)
        >>> list(scores) == UNCERTAINTIES.names(), scores["bald"].shape
        (True, torch.Size([5]))
    """
    check_samples(probs, "probs")
    names = UNCERTAINTIES.names() if names is None else names
    return {name: measure(name)(probs, logits) for name in names}


def builtin_measures(*, logits: bool = True) -> tuple[str, ...]:
    """The built-in measures (:data:`BUILTIN_MEASURES`); with ``logits=False`` only those
    computed from probabilities alone (what the adversarial cells score)."""
    return tuple(m for m in BUILTIN_MEASURES if logits or not measure(m).needs_logits)


UNCERTAINTIES.register("max_prob", max_prob)
UNCERTAINTIES.register("predictive_entropy", predictive_entropy)
UNCERTAINTIES.register("expected_entropy", expected_entropy)
UNCERTAINTIES.register("bald", bald)
UNCERTAINTIES.register("mean_std", mean_std)
UNCERTAINTIES.register("variation_ratio", variation_ratio)
UNCERTAINTIES.register("energy", Measure(energy, takes=("logits",), reference="Liu et al. 2020"))
UNCERTAINTIES.register("mean_energy", Measure(mean_energy, takes=("logits",),
                                              reference="Liu et al. 2020"))
UNCERTAINTIES.register("max_logit", Measure(max_logit, takes=("logits",),
                                            reference="Hendrycks et al. 2022"))
UNCERTAINTIES.register("mean_max_logit", Measure(mean_max_logit, takes=("logits",),
                                                 reference="Hendrycks et al. 2022"))

# The measures robustbnn ships; any name registered later is a plug-in, scored in its own cells.
BUILTIN_MEASURES: tuple[str, ...] = tuple(UNCERTAINTIES.names())
