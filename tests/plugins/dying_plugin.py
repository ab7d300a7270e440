"""A plug-in model whose training kills the worker process it runs in (``dying_model``) after
an epoch on the bench's data (the contract kit's small fit passes), as an out-of-memory kill or
a crash in native code would; in the main process it raises instead."""

import dataclasses
import multiprocessing
import os

from robustbnn.config import TrainConfig
from robustbnn.models import MODELS, ModelSpec
from tests.plugins._linear import ZeroLinear


@dataclasses.dataclass(frozen=True)
class DyingConfig(TrainConfig):
    pass


class Dying(ZeroLinear):
    """A linear classifier whose training ends its process."""

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
