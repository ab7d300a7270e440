"""The one training loop every model goes through: its own loss, best-on-validation selection,
NaN/inf detection, and a progress bar."""

from __future__ import annotations

import dataclasses
import logging
import time

import torch
from torch import Tensor
from tqdm.auto import tqdm

from robustbnn.config import TrainConfig
from robustbnn.contract.checked import Checked
from robustbnn.contract.predict import sample_probs
from robustbnn.data import DataBundle
from robustbnn.errors import ConfigError, ModelContractError, TrainingDivergedError
from robustbnn.models.base import BayesianModule
from robustbnn.training.sgmcmc import SGMCMC_OPTIMIZERS, sgmcmc_optimizer

log = logging.getLogger(__name__)

SELECTIONS = ("best_val", "last")


@dataclasses.dataclass(frozen=True)
class FitReport:
    """What training did: stored beside the cached weights and in ``run.json``."""

    epochs: int
    best_epoch: int
    best_val_accuracy: float
    seconds: float
    val_accuracy: tuple[float, ...]


def _optimizer(model: torch.nn.Module, cfg: TrainConfig, *, n_train: int = 1,
               generator: torch.Generator | None = None) -> torch.optim.Optimizer:
    if cfg.optimizer in SGMCMC_OPTIMIZERS:  # their noise scales with N and uses the generator
        return sgmcmc_optimizer(model.parameters(), cfg, n_train=n_train, generator=generator)
    if cfg.optimizer == "adam":
        params = list(model.parameters())
        # The fused kernel is the same Adam update in one pass: 1.5-2x faster steps on CPU
        # (benchmarks/bench_optimizer.py); it needs float parameters on CPU or CUDA.
        fused = all(p.is_floating_point() and p.device.type in ("cpu", "cuda") for p in params)
        return torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay,
                                fused=fused or None)
    if cfg.optimizer == "sgd":
        return torch.optim.SGD(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    raise ConfigError(f"unknown optimizer {cfg.optimizer!r}; known: ['adam', 'sgd']")


def _val_accuracy(model: BayesianModule, data: DataBundle, n_samples: int, name: str,
                  generator: torch.Generator | None) -> float:
    x, y = data.val.x, data.val.y
    probs = sample_probs(Checked(model, name), x, n_samples, generator=generator).mean(0)
    return (probs.argmax(-1) == y).float().mean().item()


def _check_fit(cfg: TrainConfig, data: DataBundle, name: str) -> None:
    """The training settings fit the data: a known selection, a validation split to select
    on, a positive learning-rate decay.

    Raises:
        ConfigError: Naming the model, the setting and the ``--set`` that fixes it.
    """
    if cfg.selection not in SELECTIONS:
        raise ConfigError(f"{name}: unknown selection {cfg.selection!r}; known: "
                          f"{list(SELECTIONS)}")
    if len(data.val) == 0 and cfg.selection != "last":
        raise ConfigError(f"{name}: {data.name} has no validation split to select an epoch on; "
                          f"set --set {name}.selection=last")
    if cfg.lr_decay <= 0:
        raise ConfigError(f"{name}: lr_decay must be > 0 (1 = constant), got {cfg.lr_decay}; "
                          f"set it with --set {name}.lr_decay=10")


class _Step:
    """One model's optimizer steps: an epoch of shuffled minibatches at the epoch's rate."""

    def __init__(self, model: BayesianModule, opt: torch.optim.Optimizer, cfg: TrainConfig,
                 name: str, generator: torch.Generator | None) -> None:
        self.model, self.opt, self.cfg, self.name, self.generator = (model, opt, cfg, name,
                                                                     generator)

    def epoch(self, x: Tensor, y: Tensor, epoch: int) -> Tensor:
        """Train one epoch (1-based) on ``x``, ``y``; return the last minibatch's loss.

        Raises:
            TrainingDivergedError: When the loss becomes NaN or inf.
            ModelContractError: When the loss finds ``sample_logits`` breaking the contract.
        """
        model, opt, cfg, name, generator = (self.model, self.opt, self.cfg, self.name,
                                            self.generator)
        n, device = x.shape[0], x.device
        if cfg.lr_decay != 1.0 and cfg.epochs > 1:  # lr0 · decay^(−(e−1)/(E−1)), e = 1..E
            for group in opt.param_groups:
                group["lr"] = cfg.lr * cfg.lr_decay ** (-(epoch - 1) / (cfg.epochs - 1))
        model.train()
        order = torch.randperm(n, generator=generator, device=generator.device if generator
                               else device).to(device)
        n_batches = -(-n // cfg.batch_size)
        for step, i in enumerate(range(0, n, cfg.batch_size)):
            idx = order[i : i + cfg.batch_size]
            try:
                loss = model.loss(x[idx], y[idx], n_train=n, generator=generator,
                                  batch=(step, n_batches))
            except ModelContractError as err:  # the default loss checks shape and dtype
                raise ModelContractError(f"training {name}: {err}") from None
            if not torch.isfinite(loss):
                raise TrainingDivergedError(
                    f"training {name} diverged: loss is {loss.item()} at epoch {epoch}, "
                    f"step {step}; nothing was cached. Lower the learning rate "
                    f"(--set {name}.lr=...) or clip gradients (--set {name}.grad_clip_norm=10)"
                )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if cfg.grad_clip_norm > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip_norm)
            if cfg.grad_clip_value > 0:
                torch.nn.utils.clip_grad_value_(model.parameters(), cfg.grad_clip_value)
            opt.step()
        return loss


def validated_with(cfg: TrainConfig, stochastic: bool) -> TrainConfig:
    """``cfg`` as :func:`fit` takes it for a model that is (not) ``stochastic``.

    A deterministic model's samples are one network, so it validates with one sample
    (``val_samples=1``); a stochastic one with ``cfg.val_samples``.
    """
    return cfg if stochastic else dataclasses.replace(cfg, val_samples=1)


def fit(
    model: BayesianModule,
    cfg: TrainConfig,
    data: DataBundle,
    *,
    name: str,
    generator: torch.Generator | None = None,
    progress: bool = True,
) -> FitReport:
    """Train ``model`` on ``data.train`` and keep the weights of its best validation epoch.

    Args:
        model: The model; its :meth:`~BayesianModule.loss` is the objective.
        cfg: Training hyper-parameters; each epoch validates with ``cfg.val_samples`` samples
            (one for a deterministic model: :func:`validated_with`).
        data: Train and validation splits, already on the model's device.
        name: The model's registry name, for messages.
        generator: Source of the shuffling and of the model's noise.
        progress: Show a progress bar.

    Returns:
        A :class:`FitReport`.

    Raises:
        TrainingDivergedError: When the loss becomes NaN or inf; names model, epoch, step.
        ModelContractError: When ``sample_logits`` breaks the contract's shape or dtype clause
            (the default loss checks them); names the model and the clause.
    """
    _check_fit(cfg, data, name)
    best_acc, best_epoch, best_state, history = -1.0, 0, None, []  # history: val accuracies
    start = time.perf_counter()
    opt = _optimizer(model, cfg, n_train=len(data.train), generator=generator)
    step = _Step(model, opt, cfg, name, generator)
    bar = tqdm(range(1, cfg.epochs + 1), desc=f"train {name}", unit="epoch", disable=not progress,
               leave=False)
    for epoch in bar:
        loss = step.epoch(data.train.x, data.train.y, epoch)
        with torch.no_grad():
            model.on_epoch_end(epoch, generator=generator)
        model.eval()
        acc = (_val_accuracy(model, data, cfg.val_samples, name, generator) if len(data.val)
               else -1.0)
        history.append(acc)
        if acc > best_acc or (cfg.selection == "last" and epoch == cfg.epochs):
            best_acc, best_epoch = acc, epoch
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        bar.set_postfix(loss=f"{loss.item():.3f}", val_acc=f"{acc:.4f}", best=best_epoch)
    if best_state is not None:
        model.load_state_dict(best_state)
    with torch.enable_grad():  # post-hoc methods (Laplace, temperature scaling) fit here
        model.after_fit(data.train, data.val, generator=generator)
    seconds = time.perf_counter() - start
    if len(data.val):
        log.info("trained %s: %d epochs in %.1f s, %s val accuracy %.4f at epoch %d", name,
                 cfg.epochs, seconds, "kept the last;" if cfg.selection == "last" else "best",
                 best_acc, best_epoch)
    else:  # best_val_accuracy is -1: there was nothing to validate on
        log.info("trained %s: %d epochs in %.1f s, kept the last (no validation split)",
                 name, cfg.epochs, seconds)
    return FitReport(cfg.epochs, best_epoch, best_acc, seconds, tuple(history))
