"""A plug-in model whose training kills the worker process it runs in (``dying_model``) after
an epoch on the bench's data (the contract kit's small fit passes), as an out-of-memory kill or
a crash in native code would; in the main process it raises instead."""

import dataclasses
import multiprocessing
import os

import torch

from robustbnn.config import TrainConfig
from robustbnn.models import MODELS, BayesianModule, ModelSpec


@dataclasses.dataclass(frozen=True)
class DyingConfig(TrainConfig):
    pass


class Dying(BayesianModule):
    """A linear classifier whose loss ends its process."""

    def __init__(self, cfg, input_shape, num_classes, generator):
        super().__init__()
        self.num_classes = num_classes
        self.w = torch.nn.Parameter(torch.zeros(torch.Size(input_shape).numel(), num_classes))

    def sample_logits(self, x, n_samples, *, generator=None):
        return (x.flatten(1) @ self.w).expand(n_samples, -1, -1)

    def loss(self, x, y, *, n_train, generator=None, batch=(0, 1)):
        self.n_train = n_train
        return super().loss(x, y, n_train=n_train, generator=generator, batch=batch)

    def on_epoch_end(self, epoch, *, generator=None):
        if self.n_train <= 100:  # the contract kit's 32-example fit passes
            return
        if multiprocessing.parent_process() is None:  # never the test process itself
            raise RuntimeError("dying_model runs in worker processes only (--jobs 2)")
        os._exit(3)


MODELS.register("dying_model", ModelSpec(Dying, DyingConfig, "kills its worker", "test",
                                         stochastic=False, shrink={"smoke": {"epochs": 1}}))
