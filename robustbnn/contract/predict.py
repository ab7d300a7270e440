"""Monte Carlo prediction in memory-bounded chunks, with the contract checked at the boundary.

One option bounds the memory of every Monte Carlo pass: ``memory_mb`` (the bench's
``--memory-mb``, ``BenchConfig.memory_mb``). :func:`chunk_rows` turns it into a number of
(sample, example) rows per ``sample_logits`` call from the model's widest layer; evaluation
chunks over examples and, when even one example's S samples exceed it, over samples too;
attacks chunk their examples with the larger per-row cost of autograd's saved tensors.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import Tensor

from robustbnn.contract.checked import checked

DEFAULT_MEMORY_MB = 1024
# Activations of the widest layer alive per (sample, example) row at once: without autograd
# the layer's input, its output and a mask or noise tensor, with room to spare; with autograd
# every layer keeps its input, mask and output for the backward pass.
LIVE_WIDTHS = 6
LIVE_WIDTHS_GRAD = 16
_FALLBACK_WIDTH = 1024  # for a model without a 2-D parameter
MIN_SAMPLES_PER_CALL = 32  # before splitting the examples, when the budget is short


def row_width(model: torch.nn.Module) -> int:
    """The widest activation of one (sample, example) row of ``model``.

    A model (or a module inside it) may say so with an ``activation_width`` attribute: a
    hypernetwork's parameters are far wider than its primary net's activations. Otherwise
    the largest dimension of its 2-D parameters, an upper bound (the input dimension of the
    first layer is counted although it is shared by all samples).
    """
    for module in model.modules():
        if (width := getattr(module, "activation_width", None)) is not None:
            return int(width)
    dims = [max(p.shape) for p in model.parameters() if p.dim() == 2]
    return max(dims, default=_FALLBACK_WIDTH)


def chunk_rows(model: torch.nn.Module, memory_mb: float = DEFAULT_MEMORY_MB, *,
               grad: bool = False) -> int:
    """(Sample, example) rows per ``sample_logits`` call that fit in ``memory_mb`` MiB.

    Args:
        model: A registry model.
        memory_mb: The budget, in MiB.
        grad: The call is differentiated (an attack), so autograd keeps activations alive.

    Raises:
        ValueError: When ``memory_mb`` is not positive.
    """
    if not memory_mb > 0:
        raise ValueError(f"memory budget must be > 0 MiB, got {memory_mb}")
    live = LIVE_WIDTHS_GRAD if grad else LIVE_WIDTHS
    return max(1, int(memory_mb * 2**20) // (4 * live * row_width(model)))


def sample_probs(
    model: torch.nn.Module,
    x: Tensor,
    n_samples: int,
    *,
    generator: torch.Generator | None = None,
    memory_mb: float = DEFAULT_MEMORY_MB,
    logits: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """Softmax outputs of ``n_samples`` posterior samples, without gradients.

    When S × N rows exceed :func:`chunk_rows`, the samples are split first (at least
    ``MIN_SAMPLES_PER_CALL`` per call), then the examples: models that draw weights or run a
    flow once per call amortise that over as many examples as fit.

    Args:
        model: A registry model (``sample_logits`` contract), checked at every call
            (:func:`~robustbnn.contract.checked.checked`).
        x: Inputs, shape (N, *), on the model's device.
        n_samples: S.
        generator: Source of the posterior samples.
        memory_mb: The memory budget of one ``sample_logits`` call, in MiB.
        logits: Also return the logits the probabilities came from (float32), for measures
            that read them; off by default, so probability measures keep one (S, N, C) copy.

    Returns:
        Probabilities, shape (S, N, C); with ``logits``, the pair (probabilities, logits).
    """
    model = checked(model)
    rows = chunk_rows(model, memory_mb)
    per_call = min(n_samples, max(MIN_SAMPLES_PER_CALL, rows // max(1, x.shape[0])))
    batch = max(1, rows // per_call)
    out, raw = [], []
    with torch.no_grad():
        for start in range(0, x.shape[0], batch):
            xb = x[start : start + batch]
            parts, raw_parts = [], []
            for done in range(0, n_samples, per_call):
                s = min(per_call, n_samples - done)
                f = model.sample_logits(xb, s, generator=generator)  # checked
                parts.append(torch.softmax(f.float(), dim=-1))
                if logits:
                    raw_parts.append(f.float())
            out.append(parts[0] if len(parts) == 1 else torch.cat(parts))
            if logits:
                raw.append(raw_parts[0] if len(raw_parts) == 1 else torch.cat(raw_parts))
    probs = out[0] if len(out) == 1 else torch.cat(out, dim=1)
    if not logits:
        return probs
    return probs, raw[0] if len(raw) == 1 else torch.cat(raw, dim=1)


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """How inputs are evaluated: ``s_eval`` fresh posterior samples per pass from one stream,
    in passes bounded by ``memory_mb`` (:func:`sample_probs`).

    Attributes:
        s_eval: S_eval, the posterior samples of one evaluation.
        generator: The evaluation's stream, never the attack's (docs/pitfalls.md §1.3).
        memory_mb: The memory budget of one ``sample_logits`` call, in MiB.
    """

    s_eval: int
    generator: torch.Generator | None = None
    memory_mb: float = DEFAULT_MEMORY_MB

    def __post_init__(self) -> None:
        if self.s_eval < 1:
            raise ValueError(f"need s_eval >= 1, got {self.s_eval}")

    def probs(self, model: torch.nn.Module, x: Tensor) -> Tensor:
        """S_eval fresh probabilities of ``x``, shape (S, B, C), without gradients."""
        return sample_probs(model, x, self.s_eval, generator=self.generator,
                            memory_mb=self.memory_mb)
