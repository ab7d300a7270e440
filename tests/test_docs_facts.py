"""Every default the README and docs/ state as a number comes from the code.

Each test reads one statement from the page's text with a regular expression and compares
what it says with the constant or config it describes (:mod:`robustbnn.suites`,
:class:`robustbnn.bench_config.BenchConfig`, the registries), so a changed default fails
here until the page says the new value. The default suite's wall time is one statement,
:data:`robustbnn.suites.DEFAULT_WALL_TIME`, quoted wherever a page gives it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from robustbnn.bench import MAX_AUTO_JOBS
from robustbnn.bench_config import BenchConfig, RobustnessKind
from robustbnn.data.shift.mnist_c import CORRUPTIONS
from robustbnn.models import MODELS
from robustbnn.suites import DEFAULT_WALL_TIME, DEFAULT_WALL_TIME_MEASURED, SUITES

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "fifteen": 15}
# A default-suite wall time on the CPU as the pages write one: "16 to 22 minutes on 2 CPU
# cores", "about 16 minutes on 2 CPU cores", "20-25 min on 2 CPU cores".
WALL_TIME = re.compile(r"(?:about )?\d+(?:\s*(?:–|-|to)\s*\d+)?\s*min(?:utes)?(?: \d+ s)?"
                       r" on 2 CPU cores")


def _text(path: Path) -> str:
    """The page with every run of whitespace one space, so a wrapped sentence matches."""
    return " ".join(path.read_text(encoding="utf-8").split())


def _find(pattern: str, path: Path) -> re.Match[str]:
    """The first match of ``pattern`` on the page; the statement must be there."""
    match = re.search(pattern, _text(path))
    assert match, f"{path.relative_to(ROOT)} no longer states {pattern!r}; update this test"
    return match


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(t) for t in re.findall(r"\d+", text))


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(t) for t in re.findall(r"\d+(?:\.\d+)?", text))


DEFAULT, PAPER, CI = SUITES.get("default"), SUITES.get("paper"), SUITES.get("ci")
BUILT_IN = [n for n in MODELS.names() if MODELS.get(n).build.__module__.startswith("robustbnn.")]
IN_DEFAULT = [n for n in BUILT_IN if MODELS.get(n).in_default]


# The default suite's wall time


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md", "docs/running.md"])
def test_every_wall_time_of_the_default_suite_is_the_one_statement(page: str) -> None:
    stated = WALL_TIME.findall(_text(ROOT / page))
    assert stated, f"{page} does not give the default suite's wall time"
    assert set(stated) == {DEFAULT_WALL_TIME}, f"{page}: {stated}"


def test_running_gives_the_measurement_behind_the_wall_time() -> None:
    assert " ".join(DEFAULT_WALL_TIME_MEASURED.split()) in _text(DOCS / "running.md")


def test_the_wall_time_is_the_range_of_its_measurements() -> None:
    seconds = [int(s.replace(",", "")) for s in re.findall(r"([\d,]+) s\b",
                                                         DEFAULT_WALL_TIME_MEASURED)]
    assert len(seconds) == 3
    low, high = _ints(DEFAULT_WALL_TIME)[:2]
    assert (low, high) == (int(min(seconds) / 60), round(max(seconds) / 60))
    seed0 = float(re.search(r"([\d.]+) min for seed 0", DEFAULT_WALL_TIME_MEASURED).group(1))
    assert seed0 == round(seconds[0] / 60, 1)


def test_the_wall_time_check_catches_a_stale_statement() -> None:
    stale = "16 to 22 minutes on 2 CPU cores, about 16 minutes on 2 CPU cores, 20-25 min on " \
            "2 CPU cores, 16 min 15 s on 2 CPU cores"
    assert len(WALL_TIME.findall(stale)) == 4
    assert WALL_TIME.findall(DEFAULT_WALL_TIME) == [DEFAULT_WALL_TIME]


# Suites, models


def test_running_lists_every_suite() -> None:
    synopsis = _find(r"robustbnn bench \[--suite ([\w|]+)\]", DOCS / "running.md").group(1)
    assert synopsis.split("|") == SUITES.names()
    text = (DOCS / "running.md").read_text(encoding="utf-8")
    section = text[text.index("* **Suites**"):text.index("* **Overrides**")]
    assert set(re.findall(r"^  \* `(\w+)`", section, re.M)) == set(SUITES.names())


def test_readme_names_only_suites_that_exist() -> None:
    named = _find(r"--suite ((?:\w+\\\|)+\w+)", ROOT / "README.md").group(1).split("\\|")
    assert set(named) <= set(SUITES.names()), named


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_the_model_counts(page: str) -> None:
    paper, baselines = _ints(_find(r"all (\d+) paper models and the (\d+) baselines",
                                   ROOT / page).group(0))
    assert paper + baselines == len(IN_DEFAULT)


def test_readme_registry_count() -> None:
    registry, default = _ints(_find(r"a registry of (\d+) Bayesian methods and baselines "
                                    r"\((\d+) in the default suite\)", ROOT / "README.md")[0])
    assert (registry, default) == (len(BUILT_IN), len(IN_DEFAULT))
    shown = _find(r"the top \w+ of (\d+) models", ROOT / "README.md").group(1)
    assert int(shown) == len(IN_DEFAULT)


# What the default suite attacks and scores


def test_readme_headline_sizes() -> None:
    readme = ROOT / "README.md"
    assert int(_find(r"attack the first (\d+) test points", readme).group(1)) == (
        DEFAULT.n_robust)
    n_shift, n_corruptions = _ints(_find(r"MNIST-C (\d+) × (\d+) corruptions", readme)[0])
    assert (n_shift, n_corruptions) == (DEFAULT.n_shift, len(CORRUPTIONS))
    n_ood, n_sets = _find(r"against ([\d,]+) images of each of (\w+) sets", readme).groups()
    embedded = [s for s in DEFAULT.ood if not s.startswith("heldout:")]
    assert (int(n_ood.replace(",", "")), WORDS[n_sets]) == (DEFAULT.n_ood, len(embedded))
    assert int(_find(r"in all (\d+) evaluations", readme).group(1)) == DEFAULT.worst_k
    steps, samples, cap = _ints(_find(
        r"L∞, (\d+) steps, (\d+) posterior samples, or (\d+) where", readme)[0])
    assert (samples, steps) == (max(DEFAULT.budget_s_attack), max(DEFAULT.budget_steps))
    assert cap == DEFAULT.budget_s_cap
    fpr = int(_find(r"\((\d+)% false positives\)", readme).group(1))
    assert fpr == round(100 * DEFAULT.detector_fpr)


def test_getting_started_headline_sizes() -> None:
    page = DOCS / "getting-started.md"
    assert int(_find(r"S_eval = (\d+) samples", page).group(1)) == DEFAULT.s_eval
    assert int(_find(r"\*\*all\*\* k = (\d+) evaluations", page).group(1)) == DEFAULT.worst_k
    fpr = int(_find(r"\((\d+)% false positives on clean data\)", page).group(1))
    assert fpr == round(100 * DEFAULT.detector_fpr)
    corruptions = _find(r"averaged over the (\w+) MNIST-C corruptions", page).group(1)
    assert WORDS[corruptions] == len(CORRUPTIONS)


def test_running_default_suite_sizes() -> None:
    page = DOCS / "running.md"
    n_eps, s1, s2 = _ints(_find(r"FGSM over (\d+) step sizes with input gradients from "
                                r"S_attack = (\d+) and (\d+)", page)[0])
    assert (n_eps, (s1, s2)) == (len(DEFAULT.eps), DEFAULT.s_attack)
    assert int(_find(r"S_eval = (\d+) posterior samples", page).group(1)) == DEFAULT.s_eval
    n_shift, top, kinds = _find(r"first (\d+) test points rotated by 0°–(\d+)° and corrupted "
                                r"by the (\w+) MNIST-C corruptions", page).groups()
    assert (int(n_shift), int(top)) == (DEFAULT.n_shift, max(DEFAULT.shift_angles))
    assert WORDS[kinds] == len(CORRUPTIONS)
    k1, k2 = _ints(_find(r"held-out MNIST classes (\d) and (\d)", page)[0])
    assert {f"heldout:{k1}", f"heldout:{k2}"} == {s for s in DEFAULT.ood if "heldout" in s}
    assert int(_find(r"BHN (\d+)-value ε grid", page).group(1)) == len(PAPER.eps)
    ci = _find(r"ε ∈ \{([\d., ]+)\}, the full (\d+)-step targeted attack on (\d+) test images",
               page)
    assert _floats(ci.group(1)) == CI.eps
    assert (int(ci.group(2)), int(ci.group(3))) == (CI.targeted_steps, CI.n_targeted)


def test_running_pgd_and_execution_defaults() -> None:
    page, cfg = DOCS / "running.md", BenchConfig()
    pgd = _find(r"default: ε ∈ \{([\d., ]+)\}, S = (\d+), (\d+) steps of ([\d.]+), (\d+) "
                r"restart, the EOT loss, (\d+) points", page)
    assert _floats(pgd.group(1)) == cfg.pgd_eps
    assert (int(pgd.group(2)),) == cfg.pgd_s_attack
    assert (int(pgd.group(3)), float(pgd.group(4))) == (cfg.pgd_steps, cfg.pgd_step_size)
    assert (int(pgd.group(5)), int(pgd.group(6))) == (cfg.pgd_restarts, cfg.n_pgd)
    assert cfg.pgd_objective == "expected"  # "the EOT loss"
    assert int(_find(r"one worker per CPU core \(at most (\d+)\)", page).group(1)) == (
        MAX_AUTO_JOBS)
    assert int(_find(r"--targeted-samples (\d+)\]", page).group(1)) == cfg.targeted_s_attack


def test_attacks_page_defaults() -> None:
    page, cfg = DOCS / "attacks.md", BenchConfig()
    assert int(_find(r"among the first (\d+) test images", page).group(1)) == (
        DEFAULT.n_targeted)
    eps, n = _find(r"ε = ([\d.]+) vs ±ε sign noise, on the first (\d+) test points",
                   page).groups()
    assert (float(eps), int(n)) == (cfg.sanity_eps, cfg.n_sanity)
    steps, size, target = _find(r"Li & Gal's (\d+) steps of ([\d.]+) towards class (\d)",
                                page).groups()
    assert (int(steps), float(size)) == (cfg.targeted_steps, cfg.targeted_step_size)
    assert int(target) == 0
    assert int(_find(r"gradients from (\d+) posterior samples", page).group(1)) == (
        cfg.targeted_s_attack)
    assert int(_find(r"evaluated every (\d+) steps", page).group(1)) == cfg.targeted_every


def test_concepts_robustness_cells() -> None:
    page = DOCS / "concepts.md"
    count = _find(r"The default and paper suites add (\w+) cell kinds", page).group(1)
    assert WORDS[count] == len(RobustnessKind)
    assert set(DEFAULT.robustness) == set(PAPER.robustness) == set(RobustnessKind)
    table = set(re.findall(r"^\| `(\w+)` \(per", page.read_text(encoding="utf-8"), re.M))
    assert table == {k.value for k in RobustnessKind}
    n = _find(r"first `n_robust` test points \(default suite: (\d+); paper: all\)", page)
    assert (int(n.group(1)), PAPER.n_robust) == (DEFAULT.n_robust, 0)
    fraction = float(_find(r"`robust_step_fraction` \(([\d.]+)\)", page).group(1))
    assert fraction == BenchConfig().robust_step_fraction
    grid = _find(r"default \{([\d, ]+)\} × \{([\d, ]+)\}; paper \{([\d, ]+)\} × \{([\d, ]+)\}",
                 page)
    assert (_ints(grid.group(1)), _ints(grid.group(2))) == (DEFAULT.budget_s_attack,
                                                            DEFAULT.budget_steps)
    assert (_ints(grid.group(3)), _ints(grid.group(4))) == (PAPER.budget_s_attack,
                                                            PAPER.budget_steps)


# References to README sections


def test_every_quoted_readme_section_exists() -> None:
    headings = set(re.findall(r"^#+ (.+)$", (ROOT / "README.md").read_text(encoding="utf-8"),
                              re.M))
    pages = [*DOCS.rglob("*.md"), ROOT / "examples" / "README.md"]
    quoted = [(p, m) for p in pages for m in re.findall(r'README, "([^"]+)"', _text(p))]
    missing = [f"{p.relative_to(ROOT)}: {m}" for p, m in quoted if m not in headings]
    assert missing == []
