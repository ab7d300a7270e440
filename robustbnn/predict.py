"""Monte Carlo prediction in memory-bounded chunks, with the contract checked at the boundary."""

from __future__ import annotations

import torch
from torch import Tensor

from robustbnn.types import check_sample_logits

ROWS_PER_CHUNK = 50_000  # S x B rows per forward pass; bounds activation memory


def sample_probs(
    model: torch.nn.Module,
    x: Tensor,
    n_samples: int,
    *,
    generator: torch.Generator | None = None,
    name: str = "model",
    rows_per_chunk: int = ROWS_PER_CHUNK,
) -> Tensor:
    """Softmax outputs of ``n_samples`` posterior samples, without gradients.

    Args:
        model: A registry model (``sample_logits`` contract).
        x: Inputs, shape (N, *), on the model's device.
        n_samples: S.
        generator: Source of the posterior samples.
        name: The model's name, for contract errors.
        rows_per_chunk: Upper bound on S x B per forward pass.

    Returns:
        Probabilities, shape (S, N, C).
    """
    batch = max(1, rows_per_chunk // max(1, n_samples))
    out = []
    with torch.no_grad():
        for start in range(0, x.shape[0], batch):
            xb = x[start : start + batch]
            logits = model.sample_logits(xb, n_samples, generator=generator)
            check_sample_logits(logits, n_samples, xb, model.num_classes, name)
            out.append(torch.softmax(logits.float(), dim=-1))
    return torch.cat(out, dim=1)
