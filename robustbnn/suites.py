"""Named bench suites: printable, frozen configs (``robustbnn bench --suite NAME
--print-config``)."""

from __future__ import annotations

import dataclasses
import typing

from robustbnn.config import Range, check_type
from robustbnn.contract.predict import LIVE_WIDTHS, LIVE_WIDTHS_GRAD
from robustbnn.errors import ConfigError
from robustbnn.registry import Registry


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
    # against 10,000 of everything else (PROTOCOLS.md §1.5), and PR(+)/PR(−) depend on it.
    ood_counts: tuple[tuple[str, int], ...] = ()
    ood_preprocessing: str = "unit"  # "unit" = [0, 1]; "bhn_reference" = the BHN code's scales
    # The split scored as in-distribution against every OOD set: "test", or "val" as the BHN
    # anomaly-detection code did (its --test_eval defaults to 0) [PROTOCOLS.md §1.5].
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
    # The robustness leaderboard for stochastic models (README "Honest robustness numbers"):
    # any of ROBUSTNESS = ("budget", "detector_aware", "adversarial_ood"); () = none.
    robustness: tuple[str, ...] = ()
    n_robust: int = 0  # first n test points of the budget and detector-aware cells (0 = all)
    robust_step_fraction: float = 0.1  # every robustness PGD steps eps * this (10 steps = eps)
    # budget: PGD-EOT (mean_s CE, true labels, random start) at every eps over S_attack x
    # steps; one run of max(steps) per S serves every step count (its checkpoints).
    budget_eps: tuple[float, ...] = (0.1, 0.3)
    budget_s_attack: tuple[int, ...] = (1, 4, 16, 64)
    budget_steps: tuple[int, ...] = (10, 40, 100)
    budget_restarts: int = 1
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
    # Calibration under dataset shift (README "Calibration under dataset shift"): any of
    # robustbnn.results.names.SHIFTS = ("rotated", "corrupted"); () = none.
    shift: tuple[str, ...] = ()
    n_shift: int = 0  # the first n test points are shifted (0 = all)
    shift_angles: tuple[int, ...] = tuple(range(0, 181, 15))  # Ovadia et al. 2019, Fig. 1
    shift_corruptions: tuple[str, ...] = ()  # MNIST-C corruptions by name; () = all fifteen
    # Seed of the corruptions' random draws: fixed, like a released dataset, so every training
    # seed is scored on the same corrupted images.
    shift_seed: int = 0


    def check(self) -> BenchConfig:
        """Check every field's type and range, and that no name is listed twice.

        Run before any work (the CLI and :func:`robustbnn.bench.plan_bench` call it), so a
        suite, a plug-in's config or a flag is refused with one line, not a traceback later.

        Returns:
            The config, unchanged (an int given for a float field is accepted as it is, so
            a run's identity does not change).

        Raises:
            ConfigError: Naming the field (and its flag), the value and the allowed range.
        """
        hints = typing.get_type_hints(BenchConfig)
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            flag = FLAGS.get(field.name)
            where = flag or field.name
            coerced = check_type(value, hints[field.name], where)
            allowed = BENCH_RANGES.get(field.name)
            if allowed is not None and not allowed.allows(coerced):
                each = " (each item)" if isinstance(coerced, tuple) else ""
                given = f"{flag} {_show(coerced)}" if flag else f"{where}={_show(coerced)}"
                fix = (f"pass another {flag}" if flag else "fix the suite's config (see "
                       "robustbnn bench --suite NAME --print-config)")
                raise ConfigError(f"{given} is out of range: {field.name} must be "
                                  f"{allowed}{each}; {fix}")
            if field.name in UNIQUE and len(set(coerced)) != len(coerced):
                twice = sorted({v for v in coerced if coerced.count(v) > 1})
                raise ConfigError(f"{where} names {twice} more than once; name each once")
        for name, n in self.ood_counts:
            if n < 0:
                raise ConfigError(f"ood_counts: {name}={n} is out of range: counts must be >= 0")
        for name, grad in SAMPLE_COUNTS.items():
            check_samples(FLAGS.get(name) or name, getattr(self, name), self.memory_mb,
                          grad=grad, fix=f"pass another {FLAGS[name]}" if name in FLAGS
                          else "fix the suite's config")
        return self

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
    "budget_eps": Range(0), "budget_s_attack": Range(1), "budget_steps": STEPS,
    "budget_restarts": Range(1), "worst_k": Range(1), "eot_tol": Range(0), "snr_min": Range(0),
    "square_queries": COUNT, "square_s_attack": Range(1), "adaptive_eps": Range(0),
    "adaptive_steps": STEPS, "adaptive_s_attack": Range(1),
    "detector_fpr": Range(0, 1, low_open=True, high_open=True), "adv_ood_eps": Range(0),
    "adv_ood_steps": STEPS, "adv_ood_s_attack": Range(1),
}
# Lists of names: one named twice would run (and report) twice.
UNIQUE = ("models", "ood", "attacks", "robustness", "shift", "heldout_models", "extra_measures",
          "adv_ood_sets", "shift_corruptions", "shift_angles")
# The flag that sets a field, for messages.
FLAGS = {"seed": "--seed", "models": "--models", "dataset": "--dataset", "ood": "--ood",
         "attacks": "--attacks", "robustness": "--robustness", "shift": "--shift",
         "memory_mb": "--memory-mb", "targeted_s_attack": "--targeted-samples",
         "ood_preprocessing": "--ood-preprocessing"}


def _show(value: object) -> str:
    return repr(value) if not isinstance(value, tuple) else ",".join(map(str, value))


# Posterior-sample counts, and whether their pass is differentiated (an attack gradient).
SAMPLE_COUNTS = {"s_eval": False, "s_attack": True, "targeted_s_attack": True,
                 "pgd_s_attack": True, "budget_s_attack": True, "square_s_attack": False,
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


SUITES: Registry[BenchConfig] = Registry("suite")

# The quick training budget of the default suite: bare `robustbnn bench` took 16 min 15 s on 2
# quiet CPU cores (2026-11-23; training 7.6 min of it, attacks and OOD the rest); on a later
# machine with torch 2.14.1, 24.5 min (training 11.7 min), and 16.6 min with --jobs 2.
# Paper defaults stay in each model's config; these overrides trade epochs and widths for time,
# measured on mnist5k (seed 0-2) to keep every model at its paper-level accuracy there.
# With the robustness cells (2026-11-25, quiet 2-core Xeon, fresh cache, seed 2): 830 s in all,
# training 408 s, robustness cells 257 s. With the four baselines (same day and machine, fresh
# cache, seed 0): 1,199 s for 17 models, training 512 s; swag's cells 191 s (a weight draw per
# sample), deep_ensemble's 102 s (five trainings).
QUICK_BUDGET = (
    # BHN Table 1 "MNIST 5,000 (A)" uses 800 hidden units; L2 1e-4 steadies the MLE baseline.
    "mlp.hidden=(800,800)", "mlp.weight_decay=0.0001",
    "dropout.hidden=(800,800)",
    "mc_dropout.hidden=(800,800)",
    # Li & Gal train 500 epochs of SGD(0.01); Adam reaches their accuracy in 40 here.
    "bbalpha_0.optimizer=adam", "bbalpha_0.lr=0.002", "bbalpha_0.epochs=40",
    "bbalpha_0.hidden=(200,200)",
    "bbalpha_05.optimizer=adam", "bbalpha_05.lr=0.002", "bbalpha_05.epochs=40",
    "bbalpha_05.hidden=(200,200)",
    "bbalpha_1.optimizer=adam", "bbalpha_1.lr=0.002", "bbalpha_1.epochs=40",
    "bbalpha_1.hidden=(200,200)",
    # At Adam's 1e-3 the posterior std barely moves from its init in 40 epochs (see bbb.py).
    "bbb_gaussian.epochs=40", "bbb_gaussian.lr=0.005",
    "bbb_mixture.epochs=40", "bbb_mixture.lr=0.005",
    # Kristiadi's 784-100-10 with 20k iterations; lower initial variances converge in 50 epochs.
    "vhn.epochs=50", "vhn.lr=0.003", "vhn.log_var_shift=-3",
    "mvn.epochs=30", "mvn.hidden=(800,800)", "mvn.kl_weight=0.0001",
    # The BHN code's default primary net has one hidden layer; its MNIST launcher uses 800.
    # The paper trains 200 epochs. In fewer, the q(g) scale barely moves from the code's init
    # (std ≈ 0.002; Adam moves log-scales ≤ lr per step) and the BHN stays a point estimate,
    # so q starts wider (std ≈ 0.05), and the code's optional 10× lr decay settles the noisy
    # one-ε-per-minibatch training. mnist5k, seed 0, 1 thread: bhn_iaf 93.0% (20 epochs, code
    # init) → 94.5% (100 epochs, this); bhn_realnvp 92.6% → 94.6%. With 800 units bhn_realnvp
    # sat on its 94% line (seeds 0-2 at 1 thread .946/.948/.947, seed 0 at 2 threads .939 and
    # .938: float rounding alone moves it), so both BHNs use Table 1's MNIST 5,000 (B) net,
    # 1,200 units (published 8-coupling RealNVP 96.27%): bhn_realnvp .949/.950/.950, 2 threads.
    "bhn_iaf.hidden=(1200,)", "bhn_iaf.epochs=100", "bhn_iaf.init_log_scale=-3.0",
    "bhn_iaf.lr_decay=10.0",
    "bhn_realnvp.hidden=(1200,)", "bhn_realnvp.epochs=100", "bhn_realnvp.init_log_scale=-3.0",
    "bhn_realnvp.lr_decay=10.0",
    # bhn_full: 784-100-10 (Kristiadi's OOD net size); as for the BHNs above, q starts wider
    # (log-scale -4 instead of the code's -7) so the noise leaves its init within 60 epochs.
    # mnist5k, seed 0: 784-50-10 at the code init, 50 epochs, 91.1%; this, 92.5%.
    "bhn_full.epochs=60", "bhn_full.flow_hidden=8", "bhn_full.hidden=(100,)",
    "bhn_full.init_log_scale=-4.0",
    # The baselines train the MLE MLP's network and budget: 784-800-800-10, L2 1e-4, 50 epochs
    # (a deep ensemble is five of them; SWAG collects the last 25 epochs, K = 20 kept).
    "deep_ensemble.hidden=(800,800)", "deep_ensemble.weight_decay=0.0001",
    "laplace.hidden=(800,800)", "laplace.weight_decay=0.0001",
    "swag.hidden=(800,800)", "swag.weight_decay=0.0001",
    "temperature_scaled.hidden=(800,800)", "temperature_scaled.weight_decay=0.0001",
)

# Held-out classes retrain the models (every model: 5.3 min per class on 2 CPU cores), so the
# default suite holds out two classes (BHN Table 3's hardest, 4, and 9) for Table 3's two
# baselines only, MLP and MC dropout (about 45 s per class; a BHN adds about 2 minutes per
# class). `--suite paper` holds out all ten for every model. All of its OOD sets are embedded.
# The robustness leaderboard runs on the first 100 test points (and 100 images per OOD set) with
# a reduced grid; --suite paper runs the full grid on every test point. Measured on 2 CPU cores
# (2026-11-25, fresh cache, 17 models) at 200 points: budget 273 s, detector-aware 108 s,
# adversarial OOD 146 s of a 1,661 s default run, so the default suite went back to 100 points
# (and 200 targeted digits) to make room for the dataset-shift cells: 1,406 s in all on the
# same machine (training 619 s, budget 162 s, FGSM 147 s, shift 129 s, adversarial OOD 95 s),
# and 936 s with the bench's default --jobs auto (two one-thread workers on 2 cores).
DEFAULT_ROBUSTNESS = {
    "robustness": ("budget", "detector_aware", "adversarial_ood"), "n_robust": 100,
    "budget_s_attack": (1, 4, 16), "budget_steps": (10, 40), "square_queries": 100,
    "adaptive_steps": 40, "adaptive_s_attack": 8,
    "adv_ood_steps": 20, "adv_ood_s_attack": 4, "n_adv_ood": 100,
}
# Calibration under dataset shift: the thirteen rotations and fifteen MNIST-C corruptions of
# the first 500 test points (--suite paper: every test point); 126 s of that run.
DEFAULT_SHIFT = {"shift": ("rotated", "corrupted"), "n_shift": 500}
SUITES.register("default", BenchConfig(
    overrides=QUICK_BUDGET, n_targeted=200,
    ood=("uniform", "gaussian", "glyphs", "heldout:4", "heldout:9"),
    heldout_models=("mlp", "mc_dropout"), **DEFAULT_ROBUSTNESS, **DEFAULT_SHIFT))
SUITES.register(
    "smoke",
    BenchConfig(
        models=("mlp", "mc_dropout"),
        shrink="smoke",
        n_train=300,
        n_test=200,
        s_eval=20,
        s_attack=(1, 32),
        eps=(0.1, 0.3),
        n_ood=200,
        n_sanity=100,
        targeted_steps=20,
        n_targeted=60,
        attacks=("fgsm", "targeted_ifgsm", "pgd"),
        pgd_s_attack=(4,),
        pgd_steps=5,
        pgd_step_size=0.05,
        n_pgd=50,
        robustness=("budget", "detector_aware", "adversarial_ood"),
        n_robust=40,
        budget_s_attack=(1, 4),
        budget_steps=(2, 5),
        worst_k=3,
        square_queries=20,
        adaptive_steps=5,
        adaptive_s_attack=2,
        adv_ood_steps=3,
        adv_ood_s_attack=2,
        n_adv_ood=40,
        shift=("rotated", "corrupted"),
        n_shift=40,
    ),
)

# The papers' full grids, sized for a GPU: full MNIST, the BHN eps grid, the papers' OOD sets
# and all ten held-out classes, S_eval = 100 everywhere, every test point attacked; model configs
# keep their paper defaults, with the papers' epoch counts (BHN 200; Li & Gal 500 of SGD).
SUITES.register(
    "paper",
    BenchConfig(
        dataset="mnist",
        overrides=("*.epochs=200", "bbalpha_0.epochs=500", "bbalpha_05.epochs=500",
                   "bbalpha_1.epochs=500"),
        eps=(0.001, 0.002, 0.003, 0.004, 0.005, 0.008, 0.01, 0.012, 0.015, 0.02, 0.025, 0.03,
             0.04, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5),  # BHN FGS_eval.py grid
        # The papers' sets only, all held in ../shared/data: no paper uses Fashion-MNIST or
        # KMNIST (add them with --ood ...,fashion_mnist,kmnist and their files or --download).
        ood=("uniform", "gaussian", "glyphs", "notmnist", "omniglot", "cifar10bw",
             *(f"heldout:{k}" for k in range(10))),
        n_ood=0,
        n_sanity=0,
        attacks=("fgsm", "targeted_ifgsm", "pgd"),
        n_pgd=0,
        robustness=("budget", "detector_aware", "adversarial_ood"),
        n_adv_ood=0,
        shift=("rotated", "corrupted"),
    ),
)

# BHN Table 2 (anomaly detection, Hendrycks & Gimpel's MLP) for the MLP and MC-dropout rows:
# 784-256-256-256-10 with tanh-GELU as the launchers ran it (PROTOCOLS.md §1.5, §8.1), L2 1e-5,
# full MNIST, 20 epochs (§8), 100 MC samples, no attacks. In-distribution = the MNIST test set.
SUITES.register(
    "bhn_table2",
    BenchConfig(
        dataset="mnist",
        models=("mlp", "mc_dropout"),
        overrides=("*.hidden=(256,256,256)", '*.activation="gelu"', "*.epochs=20",
                   "*.weight_decay=1e-05"),
        s_attack=(),
        eps=(),
        targeted_steps=0,
        ood=("uniform", "gaussian", "notmnist", "omniglot", "cifar10bw"),
        n_ood=0,
    ),
)

# What CI runs to regenerate reports/ and check it against the committed numbers (README
# "Reports and CI regression check"): three of the default suite's models at a reduced budget
# on the embedded mnist5k, the leaderboard's two FGSM step sizes plus two for the curves, the
# full 100-step targeted attack on fewer digits, and the embedded OOD sets only (no data root,
# no network). About a minute on 2 CPU cores (50-58 s measured, --no-cache).
SUITES.register(
    "ci",
    BenchConfig(
        models=("mlp", "mc_dropout", "bbb_gaussian"),
        # Bayes by Backprop draws every weight per posterior sample: 200 units keep it at
        # about a minute (400 took six of the eight minutes of the first measured run).
        overrides=("*.hidden=(400,400)", "*.epochs=20", "mlp.weight_decay=0.0001",
                   "bbb_gaussian.lr=0.005", "bbb_gaussian.hidden=(200,200)"),
        eps=(0.05, 0.1, 0.2, 0.3),
        n_targeted=100,
        n_ood=500,
    ),
)
