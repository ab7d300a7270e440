"""The model contract: everything downstream consumes logits of shape (S, B, C)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch
from torch import Tensor

from robustbnn.errors import ModelContractError, NumericalFaultError


@runtime_checkable
class BayesianClassifier(Protocol):
    """What every registry model provides.

    ``sample_logits(x, n_samples, *, generator)`` returns logits of ``n_samples`` posterior
    draws, shape ``(S, B, C)`` (samples first). It is differentiable in ``x``, its samples do
    not depend on ``train()``/``eval()`` mode, it threads ``generator`` to every random call,
    and it leaves the module's parameters unchanged. Deterministic models return ``S``
    identical slices.

    Optionally, ``attack_logits(x, n_samples, *, generator)``, with the same signature and
    shape, gives the samples of attack gradients: every example's samples must have the
    distribution of ``sample_logits``, but the examples of a batch may share draws when that
    is cheaper (MC dropout: one mask per sample, ``robustbnn.models._kept_units``). Attacks
    use it when a model has it (:func:`attack_samples`); evaluation never does, because draws
    shared across examples widen the spread of statistics over examples such as AUROC.
    """

    num_classes: int

    def sample_logits(
        self, x: Tensor, n_samples: int, *, generator: torch.Generator | None = None
    ) -> Tensor:
        """Logits of ``n_samples`` posterior samples, shape (S, B, C)."""
        ...


def attack_samples(model: torch.nn.Module, x: Tensor, n_samples: int,
                   generator: torch.Generator | None) -> Tensor:
    """The samples an attack differentiates: ``model.attack_logits`` if defined, else
    ``model.sample_logits``, shape (S, B, C) (unchecked)."""
    sample = getattr(model, "attack_logits", None) or model.sample_logits
    return sample(x, n_samples, generator=generator)


def check_sample_logits(out: Tensor, n_samples: int, x: Tensor, num_classes: int, name: str,
                        *, finite: bool = True, call: str = "sample_logits") -> Tensor:
    """Check a model's ``sample_logits`` output at the harness boundary.

    The harness runs it after every call it makes: evaluation, attacks, OOD scoring, the
    sanity checks and (shape and dtype only) the default training loss.

    Args:
        out: What the model returned.
        n_samples: The S that was asked for.
        x: The input batch, shape (B, *).
        num_classes: The model's C.
        name: The model's registry name, for the error message.
        finite: Also require finite values (training leaves a NaN loss to its own check,
            which names the epoch and step).
        call: The method that returned ``out``, for the message.

    Returns:
        ``out`` unchanged.

    Raises:
        ModelContractError: A ``ValueError`` naming the model, the clause (shape, dtype), the
            expected shape and the shape it got.
        NumericalFaultError: A :class:`ModelContractError` for NaN or inf values; the
            evaluation cells turn it into a ``numerical_fault`` row.

    Example:
        >>> check_sample_logits(torch.zeros(3, 5, 7), 3, torch.zeros(5, 2), 7, "toy").shape
        torch.Size([3, 5, 7])
    """
    expected = (n_samples, x.shape[0], num_classes)
    if not isinstance(out, Tensor) or tuple(out.shape) != expected:
        got = tuple(out.shape) if isinstance(out, Tensor) else type(out).__name__
        raise ModelContractError(
            f"model {name!r}: clause 'shape' failed: {call} must return (S, B, C) = "
            f"{expected}, got {got}{_shape_hint(got, expected)}")
    if not out.is_floating_point():
        raise ModelContractError(
            f"model {name!r}: clause 'dtype' failed: {call} returned {out.dtype}, not a "
            "floating-point dtype; return float logits (e.g. .float())")
    if finite and not torch.isfinite(out).all():
        bad = int((~torch.isfinite(out)).sum().item())
        raise NumericalFaultError(
            f"model {name!r}: clause 'finite' failed: {call} returned {bad} NaN or inf "
            f"values for a batch of {x.shape[0]} inputs in [{x.min().item():.3g}, "
            f"{x.max().item():.3g}]; fix the model or leave it out with --models",
            model=name, count=bad)
    return out


def _shape_hint(got: object, expected: tuple[int, int, int]) -> str:
    """Why a shape is wrong, when it is one of the usual mistakes."""
    s, b, c = expected
    if got == (b, s, c) and s != b:
        return " (samples last: put the sample axis first)"
    if got == (s * b, c):
        return " (flattened: keep S and B apart)"
    if isinstance(got, tuple) and len(got) == 2 and 1 in (s, b):
        return " (an axis of size 1 was squeezed away: keep it)"
    return ""
