"""The model-facing core: what a model is, how its predictive is sampled, and its random streams.

* :mod:`~robustbnn.contract.types`: the model protocol and the checks of its ``(S, B, C)``
  samples;
* :mod:`~robustbnn.contract.checked`: :class:`~robustbnn.contract.checked.Checked`, the
  harness's boundary that checks every call of a model once;
* :mod:`~robustbnn.contract.predict`: the posterior predictive from samples;
* :mod:`~robustbnn.contract.rng`: :func:`~robustbnn.contract.rng.seeded_global` for libraries
  that draw from torch's global generator;
* :mod:`~robustbnn.contract.streams`: one named generator per (seed, stream).
"""
