"""An uncertainty-measure plug-in: DOCTOR's D_alpha score (``doctor``).

A measure maps the posterior samples of a batch to one score per example, shape (B,), and
**higher means more uncertain** (more likely OOD or misclassified), the registry's direction.
Register a :class:`~robustbnn.ood.Measure`: ``takes`` names what its function receives, the
probabilities ``("probs",)``, the logits ``("logits",)`` or both, each of shape (S, B, C)
(samples first); ``version`` is part of the ids of the cells that score it, so bump it when
the function's numbers change. The bench scores a plug-in measure in cells of its own (one per
model and OOD set), so adding one to a finished run computes only its rows.

DOCTOR (Granese, Romanelli, Gorla, Palamidessi & Piantanida, "DOCTOR: A Simple Method for
Detecting Misclassification Errors", NeurIPS 2021, arXiv:2106.02395) scores the predictive's
Gini impurity against its purity: D_alpha = (1 - g) / g with g = sum_c pbar_c^2, where pbar is the
mean of the samples' probabilities. It is 0 for a one-hot predictive and C - 1 for the uniform
one.

Run it from the repository root::

    robustbnn bench --suite smoke --plugin examples.measure_plugin --out runs/doctor

Example:
    >>> import torch
    >>> doctor(torch.tensor([[[1.0, 0.0], [0.5, 0.5]]]))
    tensor([0., 1.])
"""

from __future__ import annotations

from torch import Tensor

from robustbnn.ood import UNCERTAINTIES, Measure


def doctor(probs: Tensor) -> Tensor:
    """D_alpha = (1 - g) / g, g = sum_c pbar_c^2 of the predictive; (S, B, C) -> (B,)."""
    g = probs.mean(0).square().sum(-1)  # (B,), in [1/C, 1]
    return (1 - g) / g


UNCERTAINTIES.register("doctor", Measure(
    doctor, takes=("probs",), version=1,
    reference="Granese et al., DOCTOR, NeurIPS 2021, arXiv:2106.02395"))
