"""A stack of flow layers and the two stacks a Bayesian hypernet uses (IAF or RealNVP)."""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import Tensor, nn

from robustbnn.errors import ConfigError
from robustbnn.flows.iaf import IAFStep
from robustbnn.flows.realnvp import AffineCoupling, Permutation, Reverse

FLOW_KINDS = ("iaf", "realnvp")
# Where RealNVP reorders coordinates: "permute", a fixed random permutation between
# consecutive couplings (BHNs.py); "reverse", a reversal before every coupling
# (dk_anomaly_detection.py's ReverseLayer).
COUPLING_ORDERS = ("permute", "reverse")


class FlowChain(nn.Module):
    """Layers applied in order; the log-dets add up. An empty chain is the identity."""

    def __init__(self, layers: Iterable[nn.Module]) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(self, z: Tensor) -> tuple[Tensor, Tensor]:
        """Map z of shape (..., D) to (z', log-det of shape (...))."""
        logdet = z.new_zeros(z.shape[:-1])
        for layer in self.layers:
            z, step = layer(z)
            logdet = logdet + step
        return z, logdet

    def output_index(self, dim: int) -> Tensor:
        """For each of the ``dim`` output coordinates, the input coordinate routed to it.

        Only the permutations move coordinates; the couplings and IAF steps start near the
        identity, so at initialisation output i ≈ input ``output_index(dim)[i]``. Used by
        data-dependent initialisation.
        """
        index = torch.arange(dim)
        for layer in self.layers:
            if isinstance(layer, Permutation | Reverse):
                index = index[layer.perm.cpu()]  # z' = z[..., π]
        return index


def build_flow(kind: str, dim: int, steps: int, hidden: int = 200, *,
               coupling_weight_norm: bool = False, order: str = "permute",
               generator: torch.Generator | None = None) -> FlowChain:
    """The hypernet's flow: its layers other than the :class:`~robustbnn.flows.LinearFlow`.

    Args:
        kind: ``"iaf"``: ``steps`` IAF steps, each with its own random ordering;
            ``"realnvp"``: ``steps`` affine couplings with a fixed random permutation
            between consecutive ones [CODE BHN ``MLPWeightNorm_BHN._get_hyper_net``].
        dim: D.
        steps: Number of IAF steps or coupling layers ("coupling" in the paper); 0 = none.
        hidden: Hidden units of each MADE / coupling MLP.
        coupling_weight_norm: Weight-normalise the RealNVP couplings (the MADEs of the IAF
            always are, as in the BHN code).
        order: RealNVP only, one of :data:`COUPLING_ORDERS`: ``"permute"`` puts a fixed
            random :class:`~robustbnn.flows.Permutation` between consecutive couplings
            [CODE BHN ``MLPWeightNorm_BHN``]; ``"reverse"`` puts a
            :class:`~robustbnn.flows.realnvp.Reverse` before every coupling
            [CODE BHN ``dk_anomaly_detection.py``].
        generator: Source of orderings, permutations and initialisation.

    Raises:
        ConfigError: For an unknown ``kind`` or ``order``, a negative ``steps``, or
            ``order="reverse"`` with the IAF (whose steps draw their own orderings).
    """
    if steps < 0:
        raise ConfigError(f"the number of flow steps must be >= 0, got {steps}")
    if order not in COUPLING_ORDERS:
        raise ConfigError(f"unknown coupling order {order!r}; known: {sorted(COUPLING_ORDERS)}")
    if order != "permute" and kind == "iaf":
        raise ConfigError(f"coupling order {order!r} applies to realnvp only; the IAF's steps "
                          "draw their own orderings: leave it at 'permute'")
    layers: list[nn.Module] = []
    if kind == "iaf":
        layers = [IAFStep(dim, hidden, generator=generator) for _ in range(steps)]
    elif kind == "realnvp":
        for i in range(steps):
            if order == "reverse":
                layers.append(Reverse(dim))
            elif i > 0:
                layers.append(Permutation(dim, generator=generator))
            layers.append(AffineCoupling(dim, hidden, weight_norm=coupling_weight_norm,
                                         generator=generator))
    else:
        raise ConfigError(f"unknown flow {kind!r}; known: {sorted(FLOW_KINDS)}")
    return FlowChain(layers)
