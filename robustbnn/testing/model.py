"""The model contract as a test kit, for built-in and plug-in models alike.

:func:`check_model` builds a registered model at its ``"smoke"`` size and runs every clause of
the contract (STYLE.md §2, :class:`robustbnn.contract.types.BayesianClassifier`) on it, as
scikit-learn's ``check_estimator`` runs the estimator API; :func:`check_module` does the same
for a module already built, and ``robustbnn check MODEL`` from the command line. A broken
clause is recorded as a :class:`~robustbnn.errors.ModelContractError` (a ``ValueError``)
naming the model, the clause and what was seen::

    from robustbnn.testing import check_model

    def test_my_model_keeps_the_contract():
        check_model("my_model").raise_if_failed()

The clauses, in order (``sample_logits`` runs in ``eval()``, the harness's mode, unless a
clause is about modes):

- ``build``: ``ModelSpec.build`` works on CPU, sets ``num_classes``, and equal init
  generators give bitwise equal weights.
- ``fit``: a fresh build trains as the bench trains it (``ModelSpec.fit`` or
  :func:`robustbnn.training.fit.fit` with ``on_epoch_end`` and ``after_fit``) on a tiny random
  split; the clauses below check the trained model, so methods whose posterior comes from
  training (SWAG, Laplace) are checked with it.
- ``shape``: logits of shape (S, B, C), also for S = 1, B = 1 and with autograd on.
- ``input_unchanged``: a call leaves its input ``x`` as it was, with and without autograd (a
  model that writes into it, ``x.mul_(s)``, is refused by name; every other clause gives each
  call its own copy, so such a model breaks this clause alone).
- ``dtype_finite``: floating point, no NaN or inf.
- ``logits``: not probabilities: a model whose every output row is non-negative and sums to 1
  is refused (the harness applies softmax itself).
- ``input_gradient``: the logits are differentiable in x, with a finite, nonzero gradient.
- ``reproducible``: equal generator states give bitwise equal samples.
- ``variation``: stochastic models draw different samples from other generators, and not all
  samples of one call are equal; deterministic ones (``stochastic=False``) give equal samples.
- ``train_eval``: a generator gives the same samples in ``train()`` and ``eval()``, and
  stochastic models still vary in ``eval()`` (samples that two equal generators do not
  reproduce in one mode are reported as such, not as a mode dependence).
- ``global_rng``: torch's global CPU (and CUDA) RNG, Python's and NumPy's are untouched by
  two consecutive calls, each from a distinct global state set by the check (a model that
  reseeds a global RNG on every call leaves it as the call before did).
- ``state_unchanged``: sampling leaves the state dict bitwise equal and no submodule's mode
  switched, in both modes.
- ``devices``: logits land on the input's device; a GPU run also samples a CPU copy.
- ``cache_round_trip``: :func:`robustbnn.training.cache.save` of the trained model, then
  :func:`~robustbnn.training.cache.load`
  into a fresh build (another init seed), gives the same samples:
  everything the hooks computed lives in parameters or buffers.
- ``attack_logits``: when the model has one, it keeps the sampling clauses above
  (``shape`` to ``variation``, ``global_rng``, ``state_unchanged``).
- ``loss``: a finite floating scalar in ``train()`` with a nonzero gradient to the parameters.

``robustbnn bench`` runs :data:`BENCH_CLAUSES` (after ``build`` and ``fit``) on every model of
the run, at the run's config, before the model's first cell: a model that breaks one gets no
numbers and is listed as refused on the leaderboard.

The sizes are distinct (S = 3, B = 5, C = 7, inputs (1, 6, 7)), so a swapped axis fails.
Every clause draws from explicit generators at fixed seeds inside a fork of the global RNG, and
the model's state and mode are restored after each, so a check neither depends on nor changes
what ran before it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import random
import shlex
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from robustbnn.config import parse_set, replace_checked
from robustbnn.errors import DeviceError, ModelContractError
from robustbnn.models import MODELS, ModelSpec
from robustbnn.public import warn_deprecated
from robustbnn.settings import model_config
from robustbnn.testing.bitwise import first_difference
from robustbnn.testing.clauses import Clauses, build, what
from robustbnn.testing.report import CheckReport, ClauseResult
from robustbnn.testing.sampler_clauses import Broken, CheckOptions

__all__ = ["BENCH_CLAUSES", "CLAUSES", "check_command", "check_model", "check_module",
           "missing_smoke_warning", "run_config", "smoke_config"]

log = logging.getLogger(__name__)

CLAUSES = ("build", "fit", "shape", "input_unchanged", "dtype_finite", "logits",
           "input_gradient", "reproducible", "variation", "train_eval", "global_rng",
           "state_unchanged", "devices", "cache_round_trip", "attack_logits", "loss")
"""The clauses, in the order they run and are reported."""

BENCH_CLAUSES = ("shape", "input_unchanged", "dtype_finite", "logits", "input_gradient",
                 "reproducible", "variation", "train_eval", "global_rng")
"""The cheap clauses ``robustbnn bench`` runs (after ``build`` and ``fit``) before it scores."""


def smoke_config(name: str) -> Any:
    """The config of ``name`` at its smoke size, as ``robustbnn bench --suite smoke`` has it.

    That is the spec's defaults shrunk by its ``shrink["smoke"]`` entry, or the defaults when
    the spec declares none.
    """
    spec = MODELS.get(name)
    cfg = spec.config()
    for field, value in spec.shrink.get("smoke", {}).items():
        cfg = replace_checked(cfg, field, value, owner=f"{name} (its 'smoke' shrink)")
    return cfg


def model_sets(name: str, overrides: Sequence[str]) -> list[str]:
    """The ``--set`` items of ``overrides`` that change model ``name``: its own, and the
    ``*.field`` ones whose field its config has."""
    fields = {f.name for f in dataclasses.fields(MODELS.get(name).config)}
    return [item for item, (owner, field, _) in zip(overrides, parse_set(list(overrides)),
                                                    strict=True)
            if owner == name or (owner == "*" and field in fields)]


def run_config(name: str, overrides: Sequence[str] = ()) -> Any:
    """The config ``robustbnn check NAME --set ...`` checks: the model's defaults with the
    ``--set`` items that apply to it (type- and range-checked, as ``bench`` checks them), then
    its smoke size on top, as a run's ``contract`` cell checks the model
    (:func:`robustbnn.run.tasks.contract.contract_config`).

    Raises:
        ConfigError: A malformed item, a value of the wrong type or out of range.
    """
    cfg = model_config(name, model_sets(name, overrides))
    for field, value in MODELS.get(name).shrink.get("smoke", {}).items():
        cfg = replace_checked(cfg, field, value, owner=f"{name} (its 'smoke' shrink)")
    return cfg


def check_command(name: str, *, plugins: Sequence[str] = (),
                  overrides: Sequence[str] = ()) -> str:
    """The ``robustbnn check`` command line that checks model ``name`` as a run with these
    ``--plugin`` modules and ``--set`` items checked it, shell-quoted so it works as printed.

    Example:
        >>> check_command("mlp", plugins=["my.plugin"], overrides=["*.hidden=(8,)", "x.y=1"])
        "robustbnn check --plugin my.plugin mlp --set '*.hidden=(8,)'"
    """
    words = ["robustbnn", "check", *(w for p in plugins for w in ("--plugin", p)), name]
    words += [w for item in model_sets(name, overrides) for w in ("--set", item)]
    return shlex.join(words)


def missing_smoke_warning(name: str, budget: str = "smoke") -> str | None:
    """The one-line warning for a model whose spec declares no ``budget`` shrink, else None."""
    if budget in MODELS.get(name).shrink:
        return None
    return (f"model {name} declares no {budget!r} budget in its ModelSpec.shrink, so it runs at "
            f"its full default size; declare one (e.g. ModelSpec(..., shrink={{{budget!r}: "
            "{'epochs': 2}}))")


def check_model(name: str, *, config: Any = None, options: CheckOptions | None = None,
                clauses: tuple[str, ...] | None = None, **old: Any) -> CheckReport:
    """Build and train a registered model, then run every clause of the model contract on it.

    Clause ``build`` builds the model twice on CPU from ``ModelSpec.build`` with equally seeded
    CPU generators and compares the weights; clause ``fit`` trains one as the bench does
    (:func:`robustbnn.training.fit_or_load.fit_or_load`, no cache) on the run device, for the
    config's epochs on 32 random examples. The other clauses check the trained model (the
    untrained build when training fails).

    Args:
        name: A registered model name (plug-ins must be imported first).
        config: The model config (default: :func:`smoke_config`; a model that declares no
            smoke size is checked at its defaults, with a warning).
        options: The run device and the sizes (default: :class:`CheckOptions`, on CPU at
            S = 3, B = 5, C = 7, inputs (1, 6, 7)).
        clauses: The clauses to run after ``build`` and ``fit`` (default: all of them, in
            :data:`CLAUSES` order; :data:`BENCH_CLAUSES` for the bench's cheap ones). Unless
            it is None or names ``build``, clause ``build`` only builds the model (equal init
            generators giving equal weights is not checked).
        **old: The previous release's ``device=``, ``input_shape=``, ``num_classes=``,
            ``batch=`` and ``n_samples=`` in place of ``options``: deprecated, they work until
            the release :data:`robustbnn.public.REMOVED_IN` and warn with a
            :class:`~robustbnn.public.RobustbnnDeprecationWarning`.

    Returns:
        The report; call :meth:`CheckReport.raise_if_failed` to fail on any broken clause.

    Raises:
        UnknownNameError: For an unregistered name.
        DeviceError: For a CUDA device on a machine without CUDA.
        TypeError: For an unknown keyword, or ``options`` and old keywords both.
    """
    spec = MODELS.get(name)
    options = _resolved(_options_of(name, options, old))
    if config is None and (warning := missing_smoke_warning(name)):
        log.warning("%s", warning)
    cfg = smoke_config(name) if config is None else config
    later = CLAUSES[2:] if clauses is None else tuple(clauses)
    with _isolated(options.device):
        try:
            model = _build(spec, cfg, options, compare=clauses is None or "build" in clauses)
        except Exception as err:  # noqa: BLE001 - any failure to build is this clause's
            results = [_failed(name, "build", err)]
            results += [ClauseResult(c, "skipped", "the model did not build")
                        for c in ("fit", *later)]
            return CheckReport(name, str(options.device), tuple(results))
        fitted, fit_result = _fit(name, cfg, options)
        report = check_module(model.to(options.device) if fitted is None else fitted, spec,
                              name=name, config=cfg, options=options, clauses=later)
    return dataclasses.replace(report, results=(ClauseResult("build", "ok"), fit_result,
                                                *report.results))


def check_module(model: nn.Module, spec: ModelSpec, *, name: str, config: Any,
                 options: CheckOptions | None = None,
                 clauses: tuple[str, ...] | None = None) -> CheckReport:
    """Run every clause but ``build`` and ``fit`` on a model already built and on the device.

    Pass a trained model (e.g. from :func:`robustbnn.training.fit_or_load.fit_or_load`) when
    its posterior comes from training: SWAG and Laplace sample their MAP weights until their
    hooks have run. Every clause starts from the model's state as given, in ``eval()`` (the
    harness's mode) unless it is about modes; afterwards the model's mode, state and the global
    RNGs are as they were. Clause ``cache_round_trip`` builds a fresh model from
    ``spec.build(config, options.input_shape, ...)`` with another init seed.

    Args:
        model: The model to check; ``model.num_classes`` is C.
        spec: Its registry entry (``stochastic``, ``build``).
        name: Its name, for the messages.
        config: The config it was built from.
        options: The device it is on, the input shape it was built for, B and S (default:
            :class:`CheckOptions`; its ``num_classes`` is not read).
        clauses: The clauses to run, in that order (default: all but ``build`` and ``fit``).

    Returns:
        The report, without ``build`` and ``fit`` results.
    """
    options = _resolved(options)
    ctx = Clauses(model, spec, config, options, name=name)
    results = []
    training = model.training
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    with _isolated(options.device):
        for clause in CLAUSES[2:] if clauses is None else clauses:
            try:
                model.eval()  # the harness's mode; clauses about modes set their own
                with torch.enable_grad():
                    detail = getattr(ctx, clause)() or ""
                results.append(ClauseResult(clause, "skipped" if detail else "ok", detail))
            except Exception as err:  # noqa: BLE001 - a model's own error breaks the clause
                results.append(_failed(name, clause, err))
            finally:
                model.train(training)
                with torch.no_grad():
                    model.load_state_dict(state)  # undo what a clause's model changed
    return CheckReport(name, str(options.device), tuple(results))


def _build(spec: ModelSpec, cfg: Any, options: CheckOptions, *, compare: bool) -> nn.Module:
    """Clause ``build``: the model built on CPU, with the ``num_classes`` it was asked for.

    Raises:
        Broken: When the module's ``num_classes`` differs, or (with ``compare``) when two builds
            from equal init generators differ.
    """
    model = build(spec, cfg, options.input_shape, options.num_classes, 0)
    twin = build(spec, cfg, options.input_shape, options.num_classes, 0)
    if getattr(model, "num_classes", None) != options.num_classes:
        raise Broken(f"built with num_classes={options.num_classes}, the module's "
                     f"num_classes is {getattr(model, 'num_classes', None)!r}")
    key = first_difference(model.state_dict(), twin.state_dict())
    if key and compare:  # the bench builds only
        raise Broken(f"two builds from equal init generators differ in {key!r}: "
                     "initialise every weight from the generator given to build")
    return model


def _fit(name: str, cfg: Any, options: CheckOptions) -> tuple[nn.Module | None, ClauseResult]:
    """Train a fresh build as the bench does, on 32 random examples (16 to validate on).

    Returns the trained model, or None with the clause's failure (the later clauses then check
    the untrained build).
    """
    input_shape, device = tuple(options.input_shape), options.device
    if len(input_shape) != 3 or input_shape[0] != 1:
        return None, ClauseResult("fit", "skipped", "the data splits hold (N, 1, H, W) images, "
                                  f"not inputs of shape {input_shape}")
    from robustbnn.data import DataBundle, Split
    from robustbnn.training.fit_or_load import TrainSetup, fit_or_load

    cpu = torch.Generator().manual_seed(54321)
    x = torch.rand(48, *input_shape, generator=cpu).to(device)
    y = torch.randint(options.num_classes, (48,), generator=cpu).to(device)
    train, val = Split(x[:32], y[:32]), Split(x[32:], y[32:])
    data = DataBundle("contract", train, val, val, options.num_classes, "contract-kit",
                      __name__)
    package_log = logging.getLogger("robustbnn")
    level = package_log.level
    package_log.setLevel(logging.WARNING)  # no "trained ..." line per checked model
    try:
        model, _ = fit_or_load(name, cfg, data, TrainSetup(0, device, None))
    except Exception as err:  # noqa: BLE001 - a model's own error breaks the clause
        return None, _failed(name, "fit", err)
    finally:
        package_log.setLevel(level)
    return model, ClauseResult("fit", "ok")


def _options_of(name: str, options: CheckOptions | None,
                old: dict[str, Any]) -> CheckOptions | None:
    """``options``, or the :class:`CheckOptions` of the previous release's keywords, warned."""
    if not old:
        return options
    known = {f.name for f in dataclasses.fields(CheckOptions)}
    unknown = [k for k in old if k not in known]
    if unknown:
        raise TypeError(f"check_model() got an unexpected keyword argument {unknown[0]!r}")
    if options is not None:
        raise TypeError(f"check_model() takes either options or the old keywords "
                        f"{sorted(old)}, not both")
    given = ", ".join(f"{k}={v!r}" for k, v in old.items())
    warn_deprecated(f"check_model({name!r}, {given})",
                    f"check_model({name!r}, options=CheckOptions({given}))", stacklevel=4)
    return CheckOptions(**old)


def _resolved(options: CheckOptions | None) -> CheckOptions:
    """``options`` (default :class:`CheckOptions`) with its device resolved by :func:`_device`."""
    options = options or CheckOptions()
    return dataclasses.replace(options, device=_device(options.device))


def _device(device: str | torch.device) -> torch.device:
    """``auto`` → cuda when available; a CUDA device without CUDA is a DeviceError."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise DeviceError(f"device {device} was requested but CUDA is not available to torch "
                          f"{torch.__version__} on this machine; check on cpu")
    return device


@contextlib.contextmanager
def _isolated(device: torch.device) -> Iterator[None]:
    """Fork torch's global RNGs (CPU and the run device) and restore Python's and NumPy's, so
    the checks leave every global RNG as found (a bench runs cells after them)."""
    python, numpy = random.getstate(), np.random.get_state()
    try:
        with torch.random.fork_rng(devices=[device.index or 0] if device.type == "cuda" else []):
            yield
    finally:
        random.setstate(python)
        np.random.set_state(numpy)


def _failed(name: str, clause: str, err: Exception) -> ClauseResult:
    """A failed clause's result, with its ModelContractError."""
    seen = what(err)
    error = ModelContractError(f"model {name!r}: clause {clause!r} failed: {seen}")
    error.__cause__ = err
    return ClauseResult(clause, "failed", seen, error)
