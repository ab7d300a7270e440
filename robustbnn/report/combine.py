"""Which run folders may be combined into one mean ± std leaderboard: seeds of one configuration.

``robustbnn report A B C --out DIR`` averages the runs' numbers per model and column, which is
only a seed average when the runs differ in nothing but their seed. Two runs of another suite,
model list, data, override or device would be averaged into numbers of no configuration at all,
so :func:`check_seeds_of_one_configuration` refuses them before anything is rendered, naming
the fields that differ; two runs of the same seed would count one draw twice in the spread, so
they are refused too.

What must agree, read from each ``run.json``: ``config`` (the full bench config, every field
but ``seed``; ``models`` without the fidelity reference, which later seeds may leave out), the
data fingerprint (``data.fingerprint``) and the run device. The robustbnn
version, git commit, timings and executor may differ: they do not decide a number's meaning.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from robustbnn.bench_config import BenchConfig
from robustbnn.errors import BadValueError

__all__ = ["CombineError", "check_seeds_of_one_configuration", "configuration"]

SHOWN = 3  # differing fields named in the message, at most
# BenchConfig fields added after runs were recorded (robustbnn.config.ADDED_LATER): at their
# default they mean what their absence meant, as in the plan's identity.
_ADDED_LATER = {f.name: f.default for f in dataclasses.fields(BenchConfig)
                if f.metadata.get("identity") == "omit_at_default"}


class CombineError(BadValueError):
    """Run folders that are not seeds of one configuration, given to be combined."""


def configuration(run: dict[str, Any]) -> dict[str, Any]:
    """The fields of a parsed ``run.json`` that must agree between seeds, flattened to dotted
    names (``config.models``, ``data.fingerprint``, ``device``); the seed is left out.

    Example:
        >>> configuration({"seed": 1, "device": "cpu", "config": {"seed": 1, "models": ["a"]}})
        {'config.models': '["a"]', 'device': '"cpu"'}
    """
    out: dict[str, Any] = {}
    config = run.get("config") or {}
    # The fidelity reference trains at fidelity_seed whatever the seed (docs/fidelity.md), so
    # a later seed may leave it out of its models: the reference's numbers are then its one
    # seed's, every other model's the mean over all seeds.
    reference = config.get("fidelity_reference")
    for key, value in sorted(config.items()):
        if key == "models" and reference:
            value = [m for m in value if m != reference]
        if key in _ADDED_LATER and value == _ADDED_LATER[key]:
            continue  # a field added later, at its default: as absent in older runs
        if key != "seed":
            out[f"config.{key}"] = _text(value)
    fingerprint = (run.get("data") or {}).get("fingerprint")
    if fingerprint is not None:
        out["data.fingerprint"] = _text(fingerprint)
    if run.get("device") is not None:
        out["device"] = _text(run["device"])
    return out


def _text(value: Any) -> str:
    """A canonical text of a JSON value, so lists and tuples of equal items compare equal."""
    return json.dumps(value, sort_keys=True, default=str)


def check_seeds_of_one_configuration(runs: Sequence[dict[str, Any]],
                                     run_dirs: Sequence[Path]) -> None:
    """Refuse runs that are not distinct seeds of one configuration (one run always passes).

    Args:
        runs: The parsed ``run.json`` of each folder.
        run_dirs: The folders, in the same order (for the message).

    Raises:
        CombineError: Naming the fields that differ and a value from each side, or the runs
            that share a seed.

    Example:
        >>> a = {"seed": 0, "config": {"seed": 0, "models": ["mlp"]}}
        >>> b = {"seed": 1, "config": {"seed": 1, "models": ["mlp"]}}
        >>> check_seeds_of_one_configuration([a, b], [Path("s0"), Path("s1")])
    """
    if len(runs) < 2:
        return
    configs = [configuration(run) for run in runs]
    keys = sorted(set().union(*configs))
    differ = [k for k in keys if len({c.get(k) for c in configs}) > 1]  # over every run
    if differ:
        shown = "; ".join(f"{k}: {_by_value(k, configs, run_dirs)}" for k in differ[:SHOWN])
        more = f" (and {len(differ) - SHOWN} more)" if len(differ) > SHOWN else ""
        raise CombineError(
            f"{len(runs)} runs were given to combine as mean ± std, but they are not seeds "
            f"of one configuration: they differ in {len(differ)} field(s) besides the seed, "
            f"{shown}{more}; report each run alone, or combine runs of the same command "
            "that differ only in --seed")
    seen: dict[Any, Path] = {}
    for run, run_dir in zip(runs, run_dirs, strict=True):
        seed = run.get("seed")
        if seed in seen:
            raise CombineError(
                f"{seen[seed]} and {run_dir} are both seed {seed} of one configuration: the "
                "same draw would count twice in the mean ± std; combine runs of distinct "
                "--seed values")
        seen[seed] = run_dir


def _by_value(key: str, configs: Sequence[dict[str, Any]], run_dirs: Sequence[Path]) -> str:
    """Each value of field ``key`` with the runs that have it, in run order:
    ``1 in a, c / 2 in b``."""
    groups: dict[str | None, list[str]] = {}
    for config, run_dir in zip(configs, run_dirs, strict=True):
        groups.setdefault(config.get(key), []).append(str(run_dir))
    return " / ".join(f"{_short(value)} in {', '.join(dirs)}" for value, dirs in groups.items())


def _short(text: str | None) -> str:
    """A value for the message: absent, or its JSON text cut to 60 characters."""
    if text is None:
        return "absent"
    return text if len(text) <= 60 else text[:57] + "..."
