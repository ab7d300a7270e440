"""Where a factorised-Gaussian model samples pre-activations instead of weights.

Given a layer's input h, the outputs of a weight draw are Gaussian with a mean and variance
computed from h (Kingma, Salimans & Welling 2015, "Variational Dropout and the Local
Reparameterization Trick", arXiv:1506.02557). Drawing them directly is exact for every
example's predictive; the examples of a batch then have independent draws instead of sharing
one weight draw, which changes nothing an evaluation or an attack computes per example.

The choice is the config field ``local_reparam``:

* ``"none"``: weights are drawn and shared by the batch (the papers' sampling);
* ``"first"``: the first layer, whose input all samples share, samples its outputs, so its
  GEMMs are done once for all samples; later layers draw weights;
* ``"all"``: every layer samples its outputs.

Training never uses it: the training losses draw weights (one draw per minibatch).
``benchmarks/README.md`` has the measurements behind each model's default.
"""

from __future__ import annotations

import torch
from torch import Tensor

from robustbnn.errors import ConfigError

LOCAL_REPARAM = ("none", "first", "all")


def check_local_reparam(mode: str, owner: str) -> None:
    """Raise ``ConfigError`` naming the known values for an unknown ``local_reparam``."""
    if mode not in LOCAL_REPARAM:
        raise ConfigError(f"{owner}: unknown local_reparam {mode!r}; known: "
                          f"{list(LOCAL_REPARAM)} (set it with --set {owner}.local_reparam=all)")


def is_local(mode: str, shared_input: bool) -> bool:
    """Whether a layer samples its outputs: always under "all", for shared inputs under "first"."""
    return mode == "all" or (mode == "first" and shared_input)


def draw_outputs(mean: Tensor, std: Tensor, n_samples: int,
                 generator: torch.Generator | None) -> Tensor:
    """mean + std ⊙ ε with ε ~ N(0, I): shape (S, B, out) from (B, out) or (S, B, out) moments."""
    shape = (n_samples, *mean.shape) if mean.dim() == 2 else mean.shape
    eps = torch.randn(shape, generator=generator, device=mean.device, dtype=mean.dtype)
    return torch.addcmul(mean, std, eps)
