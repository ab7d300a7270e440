"""Temperature scaling: the MLE MLP with its logits divided by one temperature T fitted on the
validation split.

The network trains exactly as ``mlp`` (same config, same loss, T = 1 throughout). After
training (``after_fit``, on the restored best epoch) T minimises the validation NLL of
softmax(z / T); as T > 0 divides every logit, no prediction changes, only its confidence.
T is log-parametrised (a buffer ``log_temperature``, 0 at build, so T > 0 and argmax is kept)
and fitted by L-BFGS as in Guo et al.'s code, here on log T from T = 1 in float64 with a
strong-Wolfe line search, so the fit is deterministic and converges (their code runs at most 50
iterations of fixed step 0.01 on T itself from T = 1.5, which need not reach the minimum).
Without a validation split T stays 1, with a warning.

References:
    Guo, Pleiss, Sun & Weinberger, "On Calibration of Modern Neural Networks", ICML 2017,
    arXiv:1706.04599 (§4.2; code ``gpleiss/temperature_scaling``).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import Tensor

from robustbnn.models.base import MODELS, SMOKE, ModelSpec, NetWrapper
from robustbnn.models.mlp import MLEConfig, build_net

if TYPE_CHECKING:
    from robustbnn.data import Split

log = logging.getLogger(__name__)

VAL_BATCH = 1000  # validation examples per forward pass when collecting the logits


class TemperatureScaled(NetWrapper):
    """A deterministic network whose logits are divided by ``exp(log_temperature)``.

    Args:
        net: The deterministic network (:func:`~robustbnn.models.mlp.build_net`).
    """

    def __init__(self, net: torch.nn.Module) -> None:
        super().__init__(net)
        self.register_buffer("log_temperature", torch.zeros(()))

    @property
    def temperature(self) -> float:
        """T, the divisor of the logits."""
        return float(self.log_temperature.exp())

    def sample_logits(
        self, x: Tensor, n_samples: int, *, generator: torch.Generator | None = None
    ) -> Tensor:
        """Logits z / T, shape (S, B, C), identical slices."""
        logits = self.net.sample_logits(x, 1)[0] * (-self.log_temperature).exp()  # (B, C)
        return logits.expand(n_samples, *logits.shape)

    def after_fit(self, train: Split, val: Split, *,
                  generator: torch.Generator | None = None) -> None:
        """Fit T on the validation split by minimising its NLL."""
        if len(val) == 0:
            log.warning("temperature_scaled: no validation split to fit the temperature on; "
                        "keeping T = 1 (the plain MLP)")
            return
        with torch.no_grad():
            logits = torch.cat([self.net.sample_logits(val.x[i : i + VAL_BATCH], 1)[0]
                                for i in range(0, len(val), VAL_BATCH)])  # (N, C)
        self.log_temperature.copy_(fit_log_temperature(logits, val.y))


def fit_log_temperature(logits: Tensor, y: Tensor, *, max_iter: int = 100) -> Tensor:
    """log T minimising the mean NLL of softmax(logits / T), by L-BFGS from log T = 0.

    Args:
        logits: Validation logits, shape (N, C).
        y: Labels, shape (N,).
        max_iter: L-BFGS iterations at most.

    Returns:
        log T, a 0-d tensor of ``logits``' dtype.
    """
    z = logits.detach().double()
    log_t = torch.zeros((), dtype=torch.float64, device=z.device, requires_grad=True)
    opt = torch.optim.LBFGS([log_t], lr=1.0, max_iter=max_iter, tolerance_grad=1e-10,
                            tolerance_change=1e-12, line_search_fn="strong_wolfe")

    def closure() -> Tensor:
        opt.zero_grad()
        nll = F.cross_entropy(z * (-log_t).exp(), y)
        nll.backward()
        return nll

    opt.step(closure)
    return log_t.detach().to(logits.dtype)


def build_temperature_scaled(cfg: MLEConfig, input_shape: tuple[int, ...], num_classes: int,
                             generator: torch.Generator | None) -> TemperatureScaled:
    """Build the MLE network with T = 1."""
    return TemperatureScaled(build_net(cfg, input_shape, num_classes, generator))


MODELS.register(
    "temperature_scaled",
    ModelSpec(
        build=build_temperature_scaled,
        config=MLEConfig,
        description="MLE MLP with one temperature fitted on the validation NLL, deterministic",
        reference="Guo et al. 2017 (ICML), arXiv:1706.04599",
        stochastic=False,
        family="deterministic",
        version="1",
        shrink={"smoke": SMOKE},
    ),
)
