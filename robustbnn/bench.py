"""Orchestration of a bench run: data -> fit or load -> clean -> FGSM -> OOD -> reports."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import logging
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

import torch
from tqdm.auto import tqdm

from robustbnn import __version__, cache
from robustbnn.attacks import FGSM, TargetedIFGSM
from robustbnn.config import override, parse_set
from robustbnn.data import DataBundle, Split, load_dataset
from robustbnn.data.heldout import heldout_split, parse_heldout
from robustbnn.data.ood_sets import OOD_DATASETS, check_preprocessing, load_ood
from robustbnn.errors import ConfigError
from robustbnn.evaluate import (clean_rows, fgsm_rows, ood_rows, sanity_rows, targeted_rows,
                                uncertainty_scores)
from robustbnn.models import MODELS, BayesianModule
from robustbnn.predict import sample_probs
from robustbnn.report.render import render
from robustbnn.report.scores import write_scores
from robustbnn.metrics.classification import accuracy
from robustbnn.report.schema import Result, setting
from robustbnn.report.store import write_json, write_results
from robustbnn.suites import BenchConfig
from robustbnn.train import fit

log = logging.getLogger(__name__)



def make_generator(device: torch.device, seed: int, *keys: str) -> torch.Generator:
    """A generator for one stream (e.g. ("mlp", "train")), derived from the run seed.

    Every model and stage has its own stream, so results do not depend on which models are
    cached or in which order they run, and evaluation samples never reuse attack samples.
    """
    digest = hashlib.sha256("/".join([str(seed), *keys]).encode()).hexdigest()
    return torch.Generator(device=device).manual_seed(int(digest[:15], 16))


def model_config(name: str, overrides: tuple[str, ...] | list[str]) -> Any:
    """The model's default config with ``name.field=value`` / ``*.field=value`` applied."""
    spec = MODELS.get(name)
    cfg = spec.config()
    fields = {f.name for f in dataclasses.fields(cfg)}
    for owner, field, value in parse_set(list(overrides)):
        if owner == name or (owner == "*" and field in fields):
            cfg = override(cfg, field, value, owner=name)
    return cfg


def resolve_models(cfg: BenchConfig) -> BenchConfig:
    """Fill in every registered model when the config names none; check the names."""
    cfg = cfg if cfg.models else dataclasses.replace(cfg, models=tuple(MODELS.names()))
    for name in (*cfg.models, *cfg.heldout_models):
        MODELS.get(name)
    return cfg


def check_overrides(cfg: BenchConfig, user: tuple[str, ...] = ()) -> None:
    """Every ``--set`` owner must be a registered model, and one of the run's for user sets."""
    for owner, _, _ in parse_set(list(cfg.overrides)):
        if owner != "*":
            MODELS.get(owner)  # unknown name -> error listing the known ones
    for owner, _, _ in parse_set(list(user)):
        if owner != "*" and owner not in cfg.models:
            MODELS.get(owner)  # unknown name -> error listing the known ones
            raise ConfigError(f"--set {owner}.…: model {owner!r} is not in this run's models "
                              f"{list(cfg.models)}; add it with --models")


def _head(split: Split, n: int) -> Split:
    return split if n <= 0 or n >= len(split) else Split(split.x[:n], split.y[:n])


def _first(x: torch.Tensor, y: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    return (x, y) if n <= 0 else (x[:n], y[:n])


def _to(split: Split, device: torch.device) -> Split:
    return Split(split.x.to(device), split.y.to(device))


def prepare_data(cfg: BenchConfig, data: DataBundle, device: torch.device) -> DataBundle:
    """Subset (first n of the fixed, shuffled splits) and move to ``device``."""
    train, val, test = _head(data.train, cfg.n_train), data.val, _head(data.test, cfg.n_test)
    if cfg.n_train:
        val = _head(val, max(100, cfg.n_train // 5))
    fingerprint = data.fingerprint
    if (len(train), len(val), len(test)) != (len(data.train), len(data.val), len(data.test)):
        sizes = f"{len(train)}/{len(val)}/{len(test)}"
        fingerprint = hashlib.sha256(f"{data.fingerprint}/{sizes}".encode()).hexdigest()
    return dataclasses.replace(data, train=_to(train, device), val=_to(val, device),
                               test=_to(test, device), fingerprint=fingerprint)


def git_sha() -> str | None:
    """The commit of the robustbnn checkout, if it is one."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=5, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None


def cost_rows(info: dict, *, s_eval: int, model: str, seed: int, dataset: str) -> list[Result]:
    """Task ``cost``: seconds per 1,000 predictions at S_eval samples, and the parameter count.

    The seconds depend on the machine (and its load), unlike every other number of a run.
    """
    knobs = setting(S_eval=s_eval)
    return [Result(model, seed, "cost", dataset, knobs, "", metric, info[metric])
            for metric in ("seconds_per_1000_predictions", "parameters")]


def fit_or_load(name: str, mcfg: Any, data: DataBundle, *, seed: int, device: torch.device,
                cache_dir: Path | None, progress: bool) -> tuple[BayesianModule, dict]:
    """Build ``name`` with config ``mcfg`` and train it, or load its weights from the cache."""
    spec = MODELS.get(name)
    model = spec.build(mcfg, tuple(data.train.x.shape[1:]), data.num_classes,
                       make_generator(device, seed, name, "init")).to(device)
    key = cache.cache_key(name, mcfg, data.fingerprint, seed)
    info: dict[str, Any] = {"config": dataclasses.asdict(mcfg), "cache_key": key}
    meta = cache.load(cache_dir, name, key, model) if cache_dir else None
    if meta is None:
        report = fit(model, mcfg, data, name=name, stochastic=spec.stochastic,
                     generator=make_generator(device, seed, name, "train"), progress=progress)
        info["fit"] = dataclasses.asdict(report)
        info["cached"] = False
        if cache_dir:
            cache.save(cache_dir, name, key, model, {"model": name, "seed": seed,
                       "data": data.fingerprint, "robustbnn": __version__, **info})
    else:
        info["fit"], info["cached"] = meta.get("fit"), True
        log.info("loaded %s from the cache (%s)", name, key)
    return model, info


def run_model(name: str, cfg: BenchConfig, data: DataBundle, *, device: torch.device,
              cache_dir: Path | None, progress: bool,
              ood_sets: dict[str, torch.Tensor] | None = None,
              scores_dir: Path | None = None) -> tuple[list[Result], dict]:
    """Fit or load one model and run every evaluation task on it (OOD: ``ood_sets``).

    With ``scores_dir``, per-example OOD scores go to ``scores_dir/scores/<model>/<set>.npz``.
    """
    spec = MODELS.get(name)
    model, info = fit_or_load(name, model_config(name, cfg.overrides), data, seed=cfg.seed,
                              device=device, cache_dir=cache_dir, progress=progress)
    info["parameters"] = sum(p.numel() for p in model.parameters())
    model.eval()  # the harness fixes the mode once; samples do not depend on it
    x, y = data.test.x, data.test.y
    t0 = time.perf_counter()
    probs = sample_probs(model, x, cfg.s_eval, name=name,
                         generator=make_generator(device, cfg.seed, name, "eval", "clean"))
    info["seconds_per_1000_predictions"] = (time.perf_counter() - t0) * 1000 / len(x)
    rows = clean_rows(probs, y, model=name, seed=cfg.seed, dataset=data.name)
    rows += cost_rows(info, s_eval=cfg.s_eval, model=name, seed=cfg.seed, dataset=data.name)
    scores_in = uncertainty_scores(probs)
    attacks = tqdm(total=len(cfg.s_attack) + (cfg.targeted_steps > 0), desc=f"attack {name}",
                   unit="attack", disable=not progress, leave=False)
    for s_attack in cfg.s_attack:
        attack = FGSM(eps=0.0, n_samples=s_attack, objective=cfg.attack_objective,
                      label=cfg.attack_label, clip=cfg.attack_clip)
        fgsm = fgsm_rows(
            model, x, y, eps_grid=cfg.eps, attack=attack, s_eval=cfg.s_eval, name=name,
            seed=cfg.seed, dataset=data.name, clean_scores=scores_in,
            attack_generator=make_generator(device, cfg.seed, name, "attack", str(s_attack)),
            eval_generator=make_generator(device, cfg.seed, name, "eval", "fgsm", str(s_attack)))
        rows += fgsm
        rows += sanity_rows(
            model, *_first(x, y, cfg.n_sanity),
            attack=dataclasses.replace(attack, eps=cfg.sanity_eps),
            fgsm=fgsm,
            s_eval=cfg.s_eval, name=name, seed=cfg.seed, dataset=data.name,
            attack_generator=make_generator(device, cfg.seed, name, "sanity", str(s_attack)),
            eval_generator=make_generator(device, cfg.seed, name, "eval", "sanity", str(s_attack)),
            member_generator=make_generator(device, cfg.seed, name, "member"))
        attacks.update()
    targeted = TargetedIFGSM(step_size=cfg.targeted_step_size, steps=cfg.targeted_steps,
                             n_samples=cfg.targeted_s_attack if spec.stochastic else 1,
                             objective=cfg.attack_objective, checkpoint_every=cfg.targeted_every)
    if cfg.targeted_steps > 0:
        rows += targeted_rows(
            model, *_first(x, y, cfg.n_targeted), attack=targeted, s_eval=cfg.s_eval, name=name,
            seed=cfg.seed, dataset=data.name,
            attack_generator=make_generator(device, cfg.seed, name, "attack", "targeted"),
            eval_generator=make_generator(device, cfg.seed, name, "eval", "targeted"))
        attacks.update()
    attacks.close()
    for ood, x_ood in tqdm((ood_sets or {}).items(), desc=f"OOD {name}", unit="set",
                           total=len(ood_sets or {}), disable=not progress, leave=False):
        probs_out = sample_probs(model, x_ood, cfg.s_eval, name=name,
                                 generator=make_generator(device, cfg.seed, name, "eval", ood))
        scores_out = uncertainty_scores(probs_out)
        rows += ood_rows(scores_in, scores_out, s_eval=cfg.s_eval, ood_name=ood, name=name,
                         seed=cfg.seed)
        if scores_dir is not None:
            write_scores(scores_dir, name, ood, scores_in, scores_out)
    return rows, info


def run_heldout(name: str, ood: str, cfg: BenchConfig, data: DataBundle, x_ood: torch.Tensor, *,
                device: torch.device, cache_dir: Path | None, progress: bool,
                scores_dir: Path | None = None) -> tuple[list[Result], dict]:
    """Train ``name`` without the held-out class and score that class as OOD (BHN Table 3).

    ``data`` is the reduced bundle of :func:`~robustbnn.data.heldout.heldout_split` and
    ``x_ood`` the held-out images. Rows: ``heldout_clean`` accuracy on the reduced test set and
    ``ood`` rows with ``dataset = ood``.
    """
    model, info = fit_or_load(name, model_config(name, cfg.overrides), data, seed=cfg.seed,
                              device=device, cache_dir=cache_dir, progress=progress)
    probs = sample_probs(model, data.test.x, cfg.s_eval, name=name,
                         generator=make_generator(device, cfg.seed, name, "eval", ood, "in"))
    rows = [Result(name, cfg.seed, "heldout_clean", ood, setting(S_eval=cfg.s_eval), "",
                   "accuracy", accuracy(probs.mean(0), data.test.y))]
    probs_out = sample_probs(model, x_ood, cfg.s_eval, name=name,
                             generator=make_generator(device, cfg.seed, name, "eval", ood, "out"))
    scores_in, scores_out = uncertainty_scores(probs), uncertainty_scores(probs_out)
    rows += ood_rows(scores_in, scores_out, s_eval=cfg.s_eval, ood_name=ood, name=name,
                     seed=cfg.seed)
    if scores_dir is not None:
        write_scores(scores_dir, name, ood, scores_in, scores_out)
    return rows, info


def run_bench(
    cfg: BenchConfig,
    *,
    suite: str,
    device: torch.device,
    out_dir: Path,
    data_root: Path | None,
    cache_dir: Path | None,
    download: bool = False,
    progress: bool = True,
    argv: list[str] | None = None,
    save_scores: bool = True,
) -> list[Result]:
    """Run the bench; write ``results.csv/.jsonl``, ``run.json``, then every report (``render``).

    With ``save_scores`` the per-example OOD scores go to ``out_dir/scores/``.

    Raises:
        UserError: For unknown names, missing or corrupt data, and diverged training.
    """
    cfg = resolve_models(cfg)
    for ood in cfg.ood:  # before any training or loading, so a typo costs nothing
        if parse_heldout(ood) is None:
            OOD_DATASETS.get(ood)
    check_preprocessing(cfg.ood_preprocessing)
    started = dt.datetime.now(dt.timezone.utc)
    data = prepare_data(cfg, load_dataset(cfg.dataset, data_root, download=download), device)
    log.info("data %s: %d train / %d val / %d test (%s)", data.name, len(data.train),
             len(data.val), len(data.test), data.source)
    ood_sets = {ood: load_ood(ood, cfg.n_ood, data_root, seed=cfg.seed, download=download,
                              preprocessing=cfg.ood_preprocessing).to(device)
                for ood in cfg.ood if parse_heldout(ood) is None}
    rows: list[Result] = []
    models: dict[str, dict] = {}
    bar = tqdm(cfg.models, desc="bench", unit="model", disable=not progress)
    for name in bar:
        bar.set_postfix(model=name)
        t0 = time.perf_counter()
        model_rows, info = run_model(name, cfg, data, device=device, cache_dir=cache_dir,
                                     progress=progress, ood_sets=ood_sets,
                                     scores_dir=out_dir if save_scores else None)
        info["seconds"] = time.perf_counter() - t0
        rows += model_rows
        models[name] = info
    for ood in cfg.ood:
        k = parse_heldout(ood, data.num_classes)
        if k is None:
            continue
        reduced, x_ood = heldout_split(data, k)
        heldout_models = [m for m in cfg.models if not cfg.heldout_models
                          or m in cfg.heldout_models]
        bar = tqdm(heldout_models, desc=f"bench {ood}", unit="model", disable=not progress)
        for name in bar:
            bar.set_postfix(model=name)
            t0 = time.perf_counter()
            model_rows, info = run_heldout(name, ood, cfg, reduced, x_ood, device=device,
                                           cache_dir=cache_dir, progress=progress,
                                           scores_dir=out_dir if save_scores else None)
            info["seconds"] = time.perf_counter() - t0
            rows += model_rows
            models[name].setdefault("heldout", {})[ood] = info
    write_results(out_dir, rows)
    run = {
        "robustbnn": __version__,
        "git_sha": git_sha(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "device": str(device),
        "seed": cfg.seed,
        "suite": suite,
        "config": dataclasses.asdict(cfg),
        "data": {"name": data.name, "source": data.source, "fingerprint": data.fingerprint,
                 "sizes": [len(data.train), len(data.val), len(data.test)]},
        "models": models,
        "argv": argv,
        "started": started.isoformat(),
        "seconds": (dt.datetime.now(dt.timezone.utc) - started).total_seconds(),
    }
    write_json(out_dir / "run.json", json.loads(json.dumps(run, default=str)))
    render([out_dir], out_dir)  # the same function as `robustbnn report`: the same bytes
    return rows
