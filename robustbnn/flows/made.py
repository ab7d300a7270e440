"""MADE: a masked, weight-normalised autoregressive network (the IAF's shift and scale)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def made_degrees(dim: int, hidden: int,
                 generator: torch.Generator | None) -> tuple[Tensor, Tensor]:
    """Random MADE degrees: a random input ordering and random hidden degrees.

    Args:
        dim: D, the number of inputs (and of each output head).
        hidden: H, the number of hidden units.
        generator: Source of the ordering and of the hidden degrees.

    Returns:
        Input degrees, shape (D,), a permutation of 1..D; hidden degrees, shape (H,), uniform
        on 1..max(D − 1, 1) (Germain et al. 2015, §4; ``shuffle('Full')`` in the BHN code).
    """
    inputs = torch.randperm(dim, generator=generator) + 1
    hiddens = torch.randint(1, max(dim - 1, 1) + 1, (hidden,), generator=generator)
    return inputs, hiddens


def made_masks(in_degrees: Tensor, hidden_degrees: Tensor) -> tuple[Tensor, Tensor]:
    """Connectivity masks of a one-hidden-layer MADE.

    Hidden unit k sees input d iff m(k) ≥ m(d); output d sees hidden unit k iff m(d) > m(k).
    So output d depends only on inputs of strictly lower degree: the product of the two
    masks is strictly triangular under the input ordering.

    Args:
        in_degrees: Input (and output) degrees, shape (D,).
        hidden_degrees: Hidden degrees, shape (H,).

    Returns:
        Boolean masks of shape (H, D) and (D, H), laid out like ``nn.Linear.weight``.
    """
    to_hidden = hidden_degrees[:, None] >= in_degrees[None, :]  # (H, D)
    to_output = in_degrees[:, None] > hidden_degrees[None, :]  # (D, H)
    return to_hidden, to_output


class MaskedWNLinear(nn.Module):
    """y = x Wᵀ + b with W_j = g_j · (u_j ⊙ M_j) / ‖u_j ⊙ M_j‖ (masked weight normalisation).

    A row whose mask is empty (the first output of a MADE) has W_j = 0, so y_j = b_j.

    Args:
        n_in: Input size.
        n_out: Output size.
        generator: Source of the initialisation.
        init_std: Standard deviation of the initial directions u and gains g; b starts at 0.
            1e-4 [CODE BHN ``IAFDenseLayer``: W, r = Normal(0.0001)].
    """

    def __init__(self, n_in: int, n_out: int, *, generator: torch.Generator | None = None,
                 init_std: float = 1e-4) -> None:
        super().__init__()
        self.direction = nn.Parameter(init_std * torch.randn(n_out, n_in, generator=generator))
        self.gain = nn.Parameter(init_std * torch.randn(n_out, generator=generator))
        self.bias = nn.Parameter(torch.zeros(n_out))

    def _masked(self, mask: Tensor) -> tuple[Tensor, Tensor]:
        u = self.direction * mask  # (n_out, n_in)
        norm = torch.linalg.vector_norm(u, dim=1)  # an empty row has norm 0 and gradient 0
        return u, self.gain / torch.where(norm > 0, norm, torch.ones_like(norm))

    def weight(self, mask: Tensor) -> Tensor:
        """The masked, normalised and scaled weight, shape (n_out, n_in)."""
        u, scale = self._masked(mask.to(self.direction.dtype))
        return u * scale[:, None]

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        """Apply to x of shape (..., n_in) with a 0/1 mask of shape (n_out, n_in)."""
        u, scale = self._masked(mask)
        # Scaling the outputs rather than the (n_out, n_in) weight saves a pass over it.
        return F.linear(x, u) * scale + self.bias


class MADE(nn.Module):
    """A MADE with one ReLU hidden layer and two output heads (shift and log-scale).

    All three layers are weight-normalised and masked [CODE BHN ``IAFDenseLayer`` with
    ``num_hids=1``]. The degrees are drawn at construction and saved with the state dict; the
    0/1 masks derived from them are kept as non-persistent buffers (rebuilding them each call
    costs as much as the masked matmuls) and rebuilt after ``load_state_dict``. Cost per call
    is O(D·H).

    Args:
        dim: D.
        hidden: H (200 in the paper).
        generator: Source of the ordering, the hidden degrees and the initialisation.
    """

    def __init__(self, dim: int, hidden: int, *,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        in_degrees, hidden_degrees = made_degrees(dim, hidden, generator)
        self.register_buffer("in_degrees", in_degrees)
        self.register_buffer("hidden_degrees", hidden_degrees)
        self.register_buffer("_to_hidden", torch.empty(0), persistent=False)
        self.register_buffer("_to_output", torch.empty(0), persistent=False)
        self.hidden = MaskedWNLinear(dim, hidden, generator=generator)
        self.shift = MaskedWNLinear(hidden, dim, generator=generator)
        self.log_scale = MaskedWNLinear(hidden, dim, generator=generator)
        self._set_masks()
        self.register_load_state_dict_post_hook(lambda module, keys: module._set_masks())

    def _set_masks(self) -> None:
        dtype = self.hidden.direction.dtype
        to_hidden, to_output = self.masks()
        self._to_hidden = to_hidden.to(dtype)
        self._to_output = to_output.to(dtype)

    def masks(self) -> tuple[Tensor, Tensor]:
        """The boolean (H, D) and (D, H) connectivity masks, from the degrees."""
        return made_masks(self.in_degrees, self.hidden_degrees)

    def forward(self, z: Tensor) -> tuple[Tensor, Tensor]:
        """Shift and log-scale pre-activation, each of shape (..., D), for z of shape (..., D)."""
        h = F.relu(self.hidden(z, self._to_hidden))
        return self.shift(h, self._to_output), self.log_scale(h, self._to_output)
