"""A wrapper's parameters as one flat vector (P,), and its net run with a stack of them (S, P).

SWAG, SG-MCMC and HMC keep their posterior as flat weight vectors, in the order of the wrapped
net's ``named_parameters()``. :class:`FlatLayout` is that order, once: it splits a vector back
into the named tensors :func:`torch.func.functional_call` takes, and runs the wrapper with S
weight vectors at once (:func:`torch.func.vmap`), giving (S, B, C) logits.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import Tensor
from torch.func import functional_call, vmap


@dataclasses.dataclass(frozen=True)
class FlatLayout:
    """Names (as ``functional_call`` on the wrapper names them), shapes and sizes of the
    wrapped net's parameters, in order."""

    names: tuple[str, ...]
    shapes: tuple[torch.Size, ...]
    numels: tuple[int, ...]

    @classmethod
    def of(cls, net: torch.nn.Module, prefix: str = "net.") -> FlatLayout:
        """The layout of ``net``'s parameters, named as the attribute ``prefix`` of a wrapper."""
        named = list(net.named_parameters())
        return cls(tuple(prefix + k for k, _ in named), tuple(p.shape for _, p in named),
                   tuple(p.numel() for _, p in named))

    @property
    def size(self) -> int:
        """P, the length of one flat vector."""
        return sum(self.numels)

    def unflatten(self, theta: Tensor) -> dict[str, Tensor]:
        """One flat vector (P,) -> the named tensors, views of ``theta``."""
        return {name: part.view(shape) for name, part, shape in
                zip(self.names, theta.split(self.numels), self.shapes, strict=True)}

    def logits(self, module: torch.nn.Module, x: Tensor, flat: Tensor) -> Tensor:
        """``module``'s logits for each weight vector in ``flat`` (S, P), shape (S, B, C)."""
        params = {name: part.view(-1, *shape) for name, part, shape in
                  zip(self.names, flat.split(self.numels, dim=1), self.shapes, strict=True)}
        return vmap(lambda p: functional_call(module, p, (x,)))(params)
