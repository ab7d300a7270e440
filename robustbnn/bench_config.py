"""The config of a bench run (:class:`BenchConfig`), its ranges and the kinds it names.

A config is frozen data: every field has a typed default, :meth:`BenchConfig.check` refuses a
value of the wrong type or out of range with one line before any work, and the closed sets it
names (the robustness cells, the kinds of dataset shift) are enums whose values are the strings
of the command line, of ``run.json`` and of the cell ids. Named configs live in
:mod:`robustbnn.suites`.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import os
import typing
from typing import Any

from robustbnn.config import ADDED_LATER, Range, check_type
from robustbnn.contract.predict import LIVE_WIDTHS, LIVE_WIDTHS_GRAD
from robustbnn.errors import ConfigError
from robustbnn.results.names import SHIFTS, ShiftKind

__all__ = ["KINDS", "TRAIN_COPIES", "BenchConfig", "BudgetObjective", "RobustnessKind",
           "check_model_memory", "check_samples", "machine_memory_mb", "max_samples",
           "model_footprint"]

log = logging.getLogger(__name__)


class RobustnessKind(enum.StrEnum):
    """The robustness leaderboard's cell kinds (``--robustness``), in plan order."""

    BUDGET = "budget"  # PGD-EOT accuracy over (S_attack, steps), worst-of-k, the flags
    DETECTOR_AWARE = "detector_aware"  # non-adaptive vs adaptive PGD against the detectors
    ADVERSARIAL_OOD = "adversarial_ood"  # OOD inputs moved to lower each uncertainty measure


class BudgetObjective(enum.StrEnum):
    """The losses the budget cells' PGD-EOT ascends, each a mean over the attack's samples;
    with more than one, each example keeps the input worst for the model (AutoAttack's
    ensemble, :func:`robustbnn.attacks.worst_case.worst_case`)."""

    CE = "ce"  # cross-entropy, (1/S) sum_s CE(f_s(x), y): saturates with large logits
    DLR = "dlr"  # difference-of-logits ratio (Croce & Hein 2020): scale-invariant margin


@dataclasses.dataclass(frozen=True)
class BenchConfig:
    """Everything a bench run does, apart from where files live and which device it uses.

    ``overrides`` are ``name.field=value`` strings applied to model configs; ``*`` as the name
    applies to every model that has the field.
    """

    dataset: str = "mnist5k"
    models: tuple[str, ...] = ()  # () = every registered model, plug-ins included
    seed: int = 0
    overrides: tuple[str, ...] = ()
    # A budget each model declares in its ModelSpec.shrink ("smoke"), applied before overrides.
    shrink: str = ""
    n_train: int = 0  # 0 = the whole training split
    n_test: int = 0  # 0 = the whole test split
    # Validation images: -1 = n_train // 5 (at least 100) when n_train is set, else all;
    # 0 = the whole split (BHN's MNIST 5,000 selects on all 10,000); n = the first n.
    n_val: int = -1
    s_eval: int = 100  # fresh posterior samples for every evaluation [BHN OOD: 100]
    # Memory budget (MiB) of one Monte Carlo pass, evaluation or attack gradient: the rows
    # per sample_logits call (robustbnn.contract.predict.chunk_rows). It decides which draws serve
    # which examples, so results agree across budgets within Monte Carlo error.
    memory_mb: int = 1024
    s_attack: tuple[int, ...] = (1, 32)  # BHN Fig. 5 and Fig. 7
    eps: tuple[float, ...] = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)  # subset of BHN grid
    attack_objective: str = "predictive"  # CE of the MC predictive, as both papers
    attack_label: str = "true"  # BHN; Li & Gal use "predicted"
    attack_clip: bool = True  # keep x_adv in [0, 1]; BHN's code did not clip
    sanity_eps: float = 0.1  # eps of the random-noise and frozen-sample checks
    n_sanity: int = 500  # first n test points for those two checks (0 = all)
    targeted_steps: int = 100  # Li & Gal §5.3: 100 steps of 0.01 towards class 0
    targeted_step_size: float = 0.01
    targeted_s_attack: int = 10  # Li & Gal: 10 MC samples per gradient (1 if deterministic)
    targeted_every: int = 10  # checkpoint every 10 steps (Li & Gal Fig. 7)
    n_targeted: int = 0  # first n test points before dropping class 0 (0 = all)
    ood: tuple[str, ...] = ("uniform", "gaussian", "glyphs")  # embedded: no download needed
    n_ood: int = 1000
    # Per-set counts that replace n_ood, as (set, n) pairs: BHN scored 1,000 notMNIST images
    # against 10,000 of everything else (docs/protocols.md §1.5), and PR(+)/PR(−) depend on it.
    ood_counts: tuple[tuple[str, int], ...] = ()
    ood_preprocessing: str = "unit"  # "unit" = [0, 1]; "bhn_reference" = the BHN code's scales
    # The split scored as in-distribution against every OOD set: "test", or "val" as the BHN
    # anomaly-detection code did (its --test_eval defaults to 0) [docs/protocols.md §1.5].
    ood_in_split: str = "test"
    # Measures from robustbnn.ood.extra.EXTRA_MEASURES scored beside the six defaults.
    extra_measures: tuple[str, ...] = ()
    # Models retrained without each held-out class (heldout:<k> in ``ood``); () = every model.
    heldout_models: tuple[str, ...] = ()
    # Attacks from robustbnn.attacks.ATTACKS: fgsm (the eps grid above, with the Carlini
    # checks), targeted_ifgsm (the targeted_* settings), and any other registered attack, run
    # like PGD-EOT at every (pgd_eps, pgd_s_attack) on the first n_pgd test points.
    attacks: tuple[str, ...] = ("fgsm", "targeted_ifgsm")
    pgd_eps: tuple[float, ...] = (0.1, 0.3)  # Madry et al.: MNIST eps 0.3
    pgd_s_attack: tuple[int, ...] = (32,)  # EOT samples per step
    pgd_steps: int = 40  # Madry et al. MNIST: 40 steps of 0.01
    pgd_step_size: float = 0.01
    pgd_restarts: int = 1
    pgd_objective: str = "expected"  # EOT: mean_s CE (Athalye et al. 2018)
    n_pgd: int = 500  # first n test points (0 = all)
    # The robustness leaderboard for stochastic models (docs/concepts.md, "Honest robustness
    # numbers"):
    # any of RobustnessKind (budget, detector_aware, adversarial_ood); () = none.
    robustness: tuple[RobustnessKind, ...] = ()
    n_robust: int = 0  # first n test points of the budget and detector-aware cells (0 = all)
    robust_step_fraction: float = 0.1  # every robustness PGD steps eps * this (10 steps = eps)
    # budget: PGD-EOT (mean_s CE, true labels, random start) at every eps over S_attack x
    # steps; one run of max(steps) per S serves every step count (its checkpoints).
    budget_eps: tuple[float, ...] = (0.1, 0.3)
    budget_s_attack: tuple[int, ...] = (1, 4, 16, 64)
    # Adaptive EOT: while eot_not_converged is raised, the budget cell runs its largest budget
    # again at the grid's last S_attack ratio times more posterior samples (64 -> 256), up to
    # this cap (0 = the grid only); at the cap the flag stays raised and the number is a bound.
    budget_s_cap: int = 256
    budget_steps: tuple[int, ...] = (10, 40, 100)
    budget_restarts: int = 1
    # Per example the worst case over PGD-EOT on each objective (same budget and streams):
    # CE alone is gradient-masked where the softmax saturates (docs/pitfalls.md §1.8).
    budget_objectives: tuple[BudgetObjective, ...] = (BudgetObjective.CE, BudgetObjective.DLR)
    worst_k: int = 10  # evaluations of the largest budget's inputs, S_eval fresh samples each
    eot_tol: float = 0.01  # eot_not_converged, transfer and black-box flags: accuracy margin
    snr_min: float = 1.0  # low_gradient_snr: median SNR of the S_attack-sample gradient below
    square_queries: int = 1000  # Square black-box check (0 = off; needs the attacks extra)
    square_s_attack: int = 4  # posterior samples per Square query
    # detector_aware: non-adaptive vs adaptive PGD-EOT, detectors thresholded at detector_fpr.
    adaptive_eps: tuple[float, ...] = (0.1,)
    adaptive_steps: int = 100
    adaptive_s_attack: int = 16
    detector_fpr: float = 0.05
    # adversarial_ood: the run's OOD sets among these, moved within each eps to lower u.
    adv_ood_sets: tuple[str, ...] = ("uniform", "glyphs", "notmnist", "omniglot")
    adv_ood_eps: tuple[float, ...] = (0.05, 0.1)
    adv_ood_steps: int = 40
    adv_ood_s_attack: int = 16
    n_adv_ood: int = 1000  # first n images of each set (0 = the run's count)
    # Calibration under dataset shift (docs/concepts.md, "Calibration under dataset shift"): any of
    # robustbnn.results.names.SHIFTS (rotated, corrupted); () = none.
    shift: tuple[ShiftKind, ...] = ()
    n_shift: int = 0  # the first n test points are shifted (0 = all)
    shift_angles: tuple[int, ...] = tuple(range(0, 181, 15))  # Ovadia et al. 2019, Fig. 1
    shift_corruptions: tuple[str, ...] = ()  # MNIST-C corruptions by name; () = all fifteen
    # Seed of the corruptions' random draws: fixed, like a released dataset, so every training
    # seed is scored on the same corrupted images.
    shift_seed: int = 0
    # Posterior fidelity (docs/fidelity.md): every other model's MC predictive on the test set
    # against that of this registered reference model (e.g. "hmc"); "" = no fidelity cells.
    # The reference trains at fidelity_seed whatever --seed is, so the seed spread of the
    # fidelity numbers is the approximate methods', against one reference, and its predictive
    # averages fidelity_samples of its posterior samples (hmc: all its stored draws).
    fidelity_reference: str = dataclasses.field(default="", metadata=ADDED_LATER)
    fidelity_seed: int = dataclasses.field(default=0, metadata=ADDED_LATER)
    fidelity_samples: int = dataclasses.field(default=800, metadata=ADDED_LATER)

    def check(self) -> BenchConfig:
        """Check every field's type and range, and that no name is listed twice.

        Run before any work (:func:`robustbnn.bench.check_bench` calls it), so a
        suite, a plug-in's config or a flag is refused with one line, not a traceback later.

        Returns:
            The config with every kind (:data:`KINDS`) given by its value made its enum
            member, which equals that value, so a run's identity does not change; otherwise
            unchanged (an int given for a float field is accepted as it is).

        Raises:
            ConfigError: Naming the field (and its flag), the value and the allowed range,
                or the unknown kinds and the known ones.
        """
        hints = typing.get_type_hints(BenchConfig)
        kinds: dict[str, tuple] = {}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            flag = FLAGS.get(field.name)
            where = flag or field.name
            if field.name in KINDS:
                _check_kinds(field.name, value)
            coerced = check_type(value, hints[field.name], where)
            if field.name in KINDS:
                kinds[field.name] = coerced
            allowed = BENCH_RANGES.get(field.name)
            if allowed is not None and not allowed.allows(coerced):
                each = " (each item)" if isinstance(coerced, tuple) else ""
                given = f"{flag} {_show(coerced)}" if flag else f"{where}={_show(coerced)}"
                fix = (f"pass another {flag}" if flag else "fix the suite's config (see "
                       "robustbnn bench --suite NAME --print-config)")
                raise ConfigError(f"{given} is out of range: {field.name} must be "
                                  f"{allowed}{each}; {fix}")
            if field.name in UNIQUE and len(set(coerced)) != len(coerced):
                twice = sorted({_plain(v) for v in coerced if coerced.count(v) > 1})
                raise ConfigError(f"{where} names {twice} more than once; name each once")
        if RobustnessKind.BUDGET in kinds["robustness"] and not kinds["budget_objectives"]:
            raise ConfigError("budget_objectives is empty but the budget cells need one: name "
                              f"at least one of {[o.value for o in BudgetObjective]}")
        for name, n in self.ood_counts:
            if n < 0:
                raise ConfigError(f"ood_counts: {name}={n} is out of range: counts must be >= 0")
        for name, grad in SAMPLE_COUNTS.items():
            check_samples(FLAGS.get(name) or name, getattr(self, name), self.memory_mb,
                          grad=grad, fix=f"pass another {FLAGS[name]}" if name in FLAGS
                          else "fix the suite's config")
        return dataclasses.replace(self, **kinds)

    def ood_count(self, name: str) -> int:
        """How many images of OOD set ``name`` the run scores (``n_ood`` unless listed)."""
        return dict(self.ood_counts).get(name, self.n_ood)


SEED_RANGE = Range(0, 2**32 - 1)  # what numpy and torch accept
COUNT = Range(0)  # n_*: 0 = all
STEPS = Range(1)
BENCH_RANGES: dict[str, Range] = {
    "seed": SEED_RANGE, "shift_seed": SEED_RANGE,
    "n_train": COUNT, "n_test": COUNT, "n_val": Range(-1), "n_sanity": COUNT,
    "n_targeted": COUNT, "n_ood": COUNT, "n_pgd": COUNT, "n_robust": COUNT, "n_adv_ood": COUNT,
    "n_shift": COUNT, "s_eval": Range(1), "memory_mb": Range(1), "s_attack": Range(1),
    "eps": Range(0), "sanity_eps": Range(0), "targeted_steps": COUNT,
    "targeted_step_size": Range(0), "targeted_s_attack": Range(1), "targeted_every": Range(1),
    "pgd_eps": Range(0), "pgd_s_attack": Range(1), "pgd_steps": STEPS, "pgd_step_size": Range(0),
    "pgd_restarts": Range(1), "robust_step_fraction": Range(0, low_open=True),
    "budget_eps": Range(0), "budget_s_attack": Range(1), "budget_s_cap": COUNT,
    "budget_steps": STEPS,
    "budget_restarts": Range(1), "worst_k": Range(1), "eot_tol": Range(0), "snr_min": Range(0),
    "square_queries": COUNT, "square_s_attack": Range(1), "adaptive_eps": Range(0),
    "adaptive_steps": STEPS, "adaptive_s_attack": Range(1),
    "detector_fpr": Range(0, 1, low_open=True, high_open=True), "adv_ood_eps": Range(0),
    "adv_ood_steps": STEPS, "adv_ood_s_attack": Range(1),
    "fidelity_seed": SEED_RANGE, "fidelity_samples": Range(1),
}
# Lists of names: one named twice would run (and report) twice.
UNIQUE = ("models", "ood", "attacks", "robustness", "shift", "heldout_models", "extra_measures",
          "adv_ood_sets", "shift_corruptions", "shift_angles", "budget_objectives")
# The flag that sets a field, for messages.
FLAGS = {"seed": "--seed", "models": "--models", "dataset": "--dataset", "ood": "--ood",
         "attacks": "--attacks", "robustness": "--robustness", "shift": "--shift",
         "memory_mb": "--memory-mb", "targeted_s_attack": "--targeted-samples",
         "ood_preprocessing": "--ood-preprocessing"}


# Fields that name kinds of a closed set: the kinds a config may name, and what one is called.
KINDS: dict[str, tuple[tuple[enum.StrEnum, ...], str]] = {
    "robustness": (tuple(RobustnessKind), "robustness cell kind"),
    "shift": (SHIFTS, "shift kind"),
    "budget_objectives": (tuple(BudgetObjective), "budget objective"),
}


def _check_kinds(field: str, value: object) -> None:
    """Every item of kind field ``field`` is one of its known kinds (other types are left to
    the type check).

    Raises:
        ConfigError: Listing the unknown kinds and the known ones.
    """
    known, what = KINDS[field]
    if not isinstance(value, tuple | list):
        return
    unknown = sorted(str(v) for v in value if isinstance(v, str) and v not in known)
    if unknown:
        raise ConfigError(f"unknown {what}(s) {unknown}; known: {[k.value for k in known]}")


def _plain(value: object) -> object:
    """An enum member as its value (for messages), anything else as it is."""
    return value.value if isinstance(value, enum.Enum) else value


def _show(value: object) -> str:
    return repr(value) if not isinstance(value, tuple) else ",".join(map(str, value))


# Posterior-sample counts, and whether their pass is differentiated (an attack gradient).
SAMPLE_COUNTS = {"s_eval": False, "s_attack": True, "targeted_s_attack": True,
                 "pgd_s_attack": True, "budget_s_attack": True, "budget_s_cap": True,
                 "square_s_attack": False,
                 "adaptive_s_attack": True, "adv_ood_s_attack": True}
# The narrowest row a model can have: every output layer is at least two logits wide. The
# check below knows no model or dataset (it runs before either is built or loaded), so it
# refuses only the counts that cannot fit whatever the model; wider models split examples
# (robustbnn.contract.predict.chunk_rows), never the samples of one example.
MIN_ROW_WIDTH = 2


def max_samples(memory_mb: int, *, grad: bool) -> int:
    """The most posterior samples of one example that can fit in ``memory_mb`` MiB.

    A Monte Carlo pass splits its examples to fit the budget, but holds every sample of an
    example at once (an attack gradient differentiates through all of them; an evaluation
    keeps the (S, B, C) probabilities whole), each at least ``MIN_ROW_WIDTH`` activations
    wide in ``LIVE_WIDTHS`` (``LIVE_WIDTHS_GRAD`` for gradients) float32 copies.

    Example:
        >>> max_samples(1024, grad=True)
        8388608
    """
    live = LIVE_WIDTHS_GRAD if grad else LIVE_WIDTHS
    return memory_mb * 2**20 // (4 * live * MIN_ROW_WIDTH)


def check_samples(where: str, counts: int | tuple[int, ...], memory_mb: int, *, grad: bool,
                  fix: str) -> None:
    """Refuse a sample count whose samples of one example cannot fit the memory budget.

    Raises:
        ConfigError: Naming ``where``, the count, the least memory it needs, the budget and
            the largest count that fits.
    """
    n = max(counts, default=0) if isinstance(counts, tuple) else counts
    bound = max_samples(memory_mb, grad=grad)
    if n > bound:
        need = n * 4 * (LIVE_WIDTHS_GRAD if grad else LIVE_WIDTHS) * MIN_ROW_WIDTH / 2**30
        raise ConfigError(f"{where} {_show(counts)} cannot fit the memory budget: one "
                          f"{'attack gradient' if grad else 'Monte Carlo pass'} holds all "
                          f"{n} samples of an example at once, at least {need:,.1f} GiB, "
                          f"more than --memory-mb {memory_mb}; {fix} (at most {bound}) or "
                          "raise --memory-mb")


# What training holds per parameter: the weights, their gradients, Adam's two moments and the
# copy of the best epoch that model selection keeps (``selection="best_val"``). Buffers (the
# posterior samples of SWAG, SG-MCMC and HMC, running statistics) are held once. Activations
# are not counted: the Monte Carlo passes are bounded by ``memory_mb`` on their own.
TRAIN_COPIES = 5


def machine_memory_mb() -> int | None:
    """This machine's physical memory in MiB (None where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20
    except (ValueError, OSError, AttributeError):
        return None


def model_footprint(spec: Any, cfg: Any, input_shape: tuple[int, ...],
                    num_classes: int) -> tuple[int, int, int] | None:
    """A model's parameter count and the bytes of its parameters and buffers, from a build on
    the ``meta`` device (shapes only: nothing is allocated, so any size counts in milliseconds).

    Args:
        spec: The model's :class:`robustbnn.models.base.ModelSpec`.
        cfg: Its config.
        input_shape: The shape of one input, ``(1, H, W)``.
        num_classes: C.

    Returns:
        ``(parameters, parameter bytes, buffer bytes)``, or None when the model cannot be
        built on the ``meta`` device (an operation there needs values, as ``torch.equal`` does).
    """
    import torch

    generator = torch.Generator()
    try:
        with torch.device("meta"):
            model = spec.build(cfg, input_shape, num_classes, generator)
    except Exception as err:  # noqa: BLE001 - any build may need values; then no count
        log.debug("cannot count the parameters of %s on the meta device: %s", spec, err)
        return None
    count = sum(p.numel() for p in model.parameters())
    params = sum(p.numel() * p.element_size() for p in model.parameters())
    buffers = sum(b.numel() * b.element_size() for b in model.buffers())
    return count, params, buffers


def check_model_memory(name: str, spec: Any, cfg: Any, input_shape: tuple[int, ...],
                       num_classes: int, *, memory_mb: int, given: tuple[str, ...] = ()) -> None:
    """Refuse a model whose training cannot fit this machine's memory beside the Monte Carlo
    budget ``memory_mb``: :data:`TRAIN_COPIES` copies of its parameters and one of its
    buffers, counted on the ``meta`` device (:func:`model_footprint`).

    Args:
        name: The model's registry name.
        spec: Its ``ModelSpec``.
        cfg: Its resolved config.
        input_shape: The shape of one input of the run's dataset.
        num_classes: The dataset's C.
        memory_mb: The run's ``--memory-mb``.
        given: The ``--set`` items that sized it, for the message (none: its config's own).

    Raises:
        ConfigError: Naming the settings, the parameter count, the estimate and the limit.
    """
    machine = machine_memory_mb()
    if machine is None or memory_mb >= machine:  # a budget beyond the machine is refused
        return  # by robustbnn.cli.bench.check_memory, naming the budget
    footprint = model_footprint(spec, cfg, input_shape, num_classes)
    if footprint is None:
        return
    count, params, buffers = footprint
    need = params * TRAIN_COPIES + buffers
    limit = machine - memory_mb
    if need <= limit * 2**20:
        return
    what = (f"{' '.join(f'--set {g}' for g in given)} makes {name}" if given
            else f"{name} (its config) is")
    fix = (f"set a smaller value with --set {given[0].partition('=')[0]}=..." if len(given) == 1
           else f"set smaller values of {', '.join(g.partition('=')[0] for g in given)}"
           if given
           else f"set smaller sizes with --set {name}.FIELD=...")
    raise ConfigError(f"{what} too large to train here: {count:,} parameters, about "
                      f"{need / 2**30:,.1f} GiB while training ({TRAIN_COPIES} float32 copies: "
                      "weights, gradients, Adam's two moments and the kept best epoch; "
                      f"buffers once), more than the {limit:,} MiB this machine has beside "
                      f"--memory-mb {memory_mb}; {fix}")
