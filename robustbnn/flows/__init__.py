"""Normalising flows for Bayesian hypernetworks: noise ε → parameters, with exact log-density.

Every flow layer maps ``z`` of shape (..., D) to ``(z', log|det ∂z'/∂z|)`` with the log-det of
shape (...), in the *sampling* direction (noise → parameters), at a cost linear in D per layer.
That is the only direction a Bayesian hypernetwork needs: it draws ε, pushes it through the
flow and scores the draw by the change of variables, never inverting the flow.

* :class:`LinearFlow` (``linear.py``): elementwise z = ε ⊙ (exp(w) + δ) + b, always first.
* :class:`MADE` (``made.py``): masked, weight-normalised autoregressive network.
* :class:`IAFStep` (``iaf.py``): inverse autoregressive flow step z ← μ(z) + σ(z) ⊙ z.
* :class:`AffineCoupling`, :class:`Permutation`, :class:`Reverse` (``realnvp.py``): RealNVP
  coupling layer and the two reorderings placed between couplings.
* :class:`FlowChain`, :func:`build_flow` (``chain.py``): a stack of layers.
* :class:`Hypernet` (``hypernet.py``): N(0, σ²I) noise → LinearFlow → chain, with log q.

Why not zuko: zuko builds its autoregressive flows as MAFs, whose one-pass direction is
data → noise; sampling runs the inverse, a D-step sequential loop (``passes = features``;
D = 810 scales for a 784-400-400-10 net). Its maintainers' recipe for an IAF is to invert a
MAF's transform (zuko discussion #72), which does give a one-pass sampler, but its masked MLP
has neither the weight normalisation nor the exp(·) + 0.001 scales and 1e-4 initialisation of
the BHN code, and it initialises from the global RNG rather than a ``torch.Generator``. So
these few layers are written here, following the authors' Theano code (``modules.py``:
``LinearFlowLayer``, ``IAFDenseLayer``, ``CoupledDenseLayer``, ``PermuteLayer``).

References:
    Krueger et al., "Bayesian Hypernetworks", arXiv:1710.04759, 2017.
    Kingma et al., "Improved Variational Inference with Inverse Autoregressive Flow",
    NeurIPS 2016, arXiv:1606.04934.
    Dinh, Sohl-Dickstein & Bengio, "Density estimation using Real NVP", ICLR 2017,
    arXiv:1605.08803.
    Germain, Gregor, Murray & Larochelle, "MADE: Masked Autoencoder for Distribution
    Estimation", ICML 2015, arXiv:1502.03509.
"""

from __future__ import annotations

from robustbnn.flows.chain import FlowChain, build_flow
from robustbnn.flows.hypernet import Hypernet
from robustbnn.flows.iaf import IAFStep
from robustbnn.flows.linear import LinearFlow
from robustbnn.flows.made import MADE, made_masks
from robustbnn.flows.realnvp import AffineCoupling, Permutation, Reverse

__all__ = [
    "MADE",
    "AffineCoupling",
    "FlowChain",
    "Hypernet",
    "IAFStep",
    "LinearFlow",
    "Permutation",
    "Reverse",
    "build_flow",
    "made_masks",
]
