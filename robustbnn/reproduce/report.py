"""An experiment's report: our table beside the published one, with Δ only under its protocol.

``NAME.csv`` holds one line per table cell (ours per seed, mean ± std, the published value,
Δ, what differs from the published protocol, the 95% interval of our mean and whether the
published value lies inside it); ``NAME.md`` lays it out with the protocol that ran, the
budget, seeds and wall time; ``NAME.json`` records what ran and when (budget,
variant, seeds, date, runs not run) for ``reproduce --list`` (:mod:`.status`);
``figures/NAME_*.png`` where the paper has figures.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import statistics
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from robustbnn.bench_config import BenchConfig
from robustbnn.report.intervals import Component
from robustbnn.report.markdown import md_table
from robustbnn.report.protocol import recorded_model_config, run_fields
from robustbnn.report.published import differences
from robustbnn.reproduce.experiment import Experiment
from robustbnn.reproduce.noise import delta_text, in_unit, inside, mean_interval, outside_text
from robustbnn.results.examples import group_key
from robustbnn.results.schema import Result
from robustbnn.results.store import write_text_atomic
from robustbnn.settings import model_config

__all__ = ["RunResults", "budget_changes", "compare_frame", "write_report"]


@dataclasses.dataclass(frozen=True)
class RunResults:
    """The rows of one run and seed, and its ``run.json`` (``run``: the model configs it
    trained with, which protocol matching reads; empty when the run wrote none).

    ``examples``: per model, per group key (:func:`~robustbnn.results.examples.group_key`),
    the per-example parts behind its rows, as
    :func:`~robustbnn.results.examples.read_examples` reads them from the run folder (empty
    for a run without them: then the intervals are over seeds only).
    """

    label: str
    seed: int
    config: BenchConfig
    rows: list[Result]
    run: dict[str, Any]
    examples: dict[str, dict[str, dict[str, np.ndarray]]] = dataclasses.field(
        default_factory=dict)

    def component(self, row: Result) -> Component | None:
        """The row's examples as a :class:`~robustbnn.report.intervals.Component`, or None
        where the run holds none its metric can resample."""
        parts = self.examples.get(row.model, {}).get(group_key(row.to_json()))
        if parts is None:
            return None
        comp = Component(row.metric, parts)
        return comp if comp.supported() else None


def _matches(row: Result, model: str, match: dict[str, Any]) -> bool:
    if row.model != model:
        return False
    for key, want in match.items():
        if key.startswith("setting."):
            if row.setting.get(key.split(".", 1)[1]) != want:
                return False
        elif getattr(row, key) != want:
            return False
    return True


def compare_frame(exp: Experiment, variant: str, results: list[RunResults]) -> pd.DataFrame:
    """One line per table cell: per-seed values, mean, std, published value, Δ, differences,
    the 95% interval of the mean, and whether the published value lies inside it.

    Δ = mean − published, only where every seed's run follows the entry's protocol
    (``differs`` empty); elsewhere ``differs`` lists the departures and Δ is NaN. ``lo`` and
    ``hi`` bound the mean's 95% interval in the cell's unit: a bootstrap over the test
    examples and seeds (:func:`~robustbnn.report.intervals.interval`) where every matched
    row has examples, else a t interval over the seeds (NaN for one seed). ``inside`` is
    ``yes`` or ``no`` where Δ and the interval are shown, else empty.
    """
    lines = []
    for c in exp.compares(variant):
        per_seed: dict[int, float] = {}
        sample: dict[int, list[Component | None]] = {}
        diffs: dict[str, None] = {}
        for res in results:
            if res.label != c.run:
                continue
            rows = [r for r in res.rows if _matches(r, c.model, c.match)]
            if not rows:
                continue
            per_seed[res.seed] = statistics.fmean(in_unit(c, r.value) for r in rows)
            sample[res.seed] = [res.component(r) for r in rows]
            if c.entry is not None:
                base = run_fields(dataclasses.asdict(res.config),  # once per cell
                                  recorded_model_config(res.run, c.model))
                for r in rows:
                    fields = base | {f"setting.{k}": v for k, v in r.setting.items()}
                    diffs |= dict.fromkeys(differences(c.entry.protocol, fields))
        values = list(per_seed.values())
        mean = statistics.fmean(values) if values else math.nan
        std = statistics.stdev(values) if len(values) > 1 else math.nan
        paper = c.entry.value if c.entry is not None else math.nan
        differs = "; ".join(diffs)
        delta = mean - paper if c.entry is not None and not differs and values else math.nan
        lo, hi = mean_interval(c, [sample[s] for s in per_seed], values)
        shown = not math.isnan(delta) and not math.isnan(lo)
        lines.append({"row": c.row, "column": c.column, "run": c.run, "model": c.model,
                      "unit": c.unit, "seeds": len(values), "mean": mean, "std": std,
                      "paper": paper, "delta": delta, "differs": differs, "lo": lo, "hi": hi,
                      "inside": inside(paper, lo, hi) if shown else "",
                      **{f"seed{s}": v for s, v in sorted(per_seed.items())}})
    return pd.DataFrame(lines)


def budget_changes(exp: Experiment, variant: str, budget: str) -> list[str]:
    """What the budget changes from ``full``: per run and model, each differing setting."""
    if budget == "full":
        return []
    full = {r.label: r.config for r in exp.runs("full", variant)}
    out = []
    for run in exp.runs(budget, variant):
        ref = full.get(run.label)
        if ref is None:
            out.append(f"run {run.label}: not in the full budget")
            continue
        a, b = dataclasses.asdict(run.config), dataclasses.asdict(ref)
        for key in a:
            if key not in ("overrides", "seed") and a[key] != b[key]:
                out.append(f"run {run.label}: {key} {b[key]} → {a[key]}")
        for model in run.config.models:
            mine = dataclasses.asdict(model_config(model, run.config.overrides, run.config.shrink))
            theirs = dataclasses.asdict(model_config(model, ref.overrides, ref.shrink))
            out += [f"run {run.label}, {model}: {k} {theirs[k]} → {mine[k]}"
                    for k in mine if mine[k] != theirs[k]]
    return out


def undeclared_changes(exp: Experiment, variant: str) -> list[str]:
    """What the ``ci`` budget changes beyond the models' epochs and ``exp.ci_shrinks``."""
    allowed = (": epochs ", *(f": {k} " for k in exp.ci_shrinks))
    return [c for c in budget_changes(exp, variant, "ci") if not any(a in c for a in allowed)]


def _fmt(value: float, unit: str) -> str:
    if math.isnan(value):
        return "–"
    if unit == "count":
        return f"{value:,.0f}"
    return f"{value:.2f}" if unit == "percent" else f"{value:.4f}"


def _ours(line: pd.Series) -> str:
    """``mean ± std [lo, hi]``: the std where several seeds, the interval where there is one."""
    text = _fmt(line["mean"], line["unit"])
    if not math.isnan(line["std"]):
        text += f" ± {_fmt(line['std'], line['unit'])}"
    lo, hi = line.get("lo", math.nan), line.get("hi", math.nan)
    if not (math.isnan(lo) or math.isnan(hi)):
        text += f" [{_fmt(lo, line['unit'])}, {_fmt(hi, line['unit'])}]"
    return text


def _protocol_lines(results: list[RunResults]) -> list[str]:
    """What ran: each run's bench settings and model configs that define the protocol."""
    seen: dict[str, RunResults] = {}
    for res in results:
        seen.setdefault(res.label, res)
    out = []
    keys = ("dataset", "n_train", "n_test", "s_eval", "attacks", "eps", "attack_label",
            "attack_clip", "attack_objective", "s_attack", "ood", "ood_counts",
            "ood_preprocessing", "ood_in_split", "extra_measures")
    for label, res in seen.items():
        cfg = dataclasses.asdict(res.config)
        bench = ", ".join(f"{k}={cfg[k]}" for k in keys if cfg[k] not in ((), 0, "", None))
        out.append(f"- run `{label}`: {bench}")
        for model in res.config.models:
            mcfg = dataclasses.asdict(model_config(model, res.config.overrides, res.config.shrink))
            text = ", ".join(f"{k}={v}" for k, v in mcfg.items())
            out.append(f"  - `{model}`: {text}")
    return out


def _figure(exp: Experiment, results: list[RunResults], out_dir: Path) -> list[str]:
    import matplotlib.pyplot as plt

    from robustbnn.report.canvas import save_figure  # sets the Agg backend

    written = []
    for fig_spec in exp.figures:
        fig, ax = plt.subplots(figsize=(5.5, 3.6))
        curves: dict[tuple[str, str], dict[float, list[float]]] = {}
        for res in results:
            for r in res.rows:
                if (r.task != fig_spec.task or r.metric != fig_spec.metric
                        or r.measure != fig_spec.measure or fig_spec.x not in r.setting
                        or any(r.setting.get(k) != v for k, v in fig_spec.where.items())):
                    continue
                pts = curves.setdefault((res.label, r.model), {})
                pts.setdefault(float(r.setting[fig_spec.x]), []).append(r.value)
        for (label, model), pts in curves.items():
            xs = sorted(pts)
            ax.plot(xs, [statistics.fmean(pts[x]) for x in xs], marker=".",
                    label=model if len({k[0] for k in curves}) == 1 else f"{model} ({label})")
        ax.set_xlabel(fig_spec.x)
        ax.set_ylabel(fig_spec.metric if not fig_spec.measure
                      else f"{fig_spec.measure} ({fig_spec.metric})")
        ax.set_title(fig_spec.title, fontsize=9)
        if curves:
            ax.legend(fontsize=7)
        fig.tight_layout()
        path = save_figure(fig, out_dir / "figures" / f"{exp.name}_{fig_spec.name}.png")
        written.append(path.relative_to(out_dir).as_posix())
    return written


def write_report(exp: Experiment, results: list[RunResults], meta: dict[str, Any],
                 out_dir: Path) -> Path:
    """Write ``NAME.csv``, ``NAME.md`` and the figures; return the Markdown path."""
    out_dir = Path(out_dir)
    variant, budget = meta["variant"], meta["budget"]
    frame = compare_frame(exp, variant, results)
    csv = frame.assign(experiment=exp.name, budget=budget, variant=variant)
    write_text_atomic(out_dir / f"{exp.name}.csv",
                      csv.to_csv(index=False, float_format="%.6g", lineterminator="\n"))
    figures = _figure(exp, results, out_dir)
    md = (_intro(exp, meta) + _comparison(frame) + _other_protocols(frame)
          + _closing(exp, figures, results))
    path = out_dir / f"{exp.name}.md"
    write_text_atomic(path, "\n".join(md))
    _write_sidecar(exp, meta, out_dir)
    return path


def _write_sidecar(exp: Experiment, meta: dict[str, Any], out_dir: Path) -> None:
    """``NAME.json`` beside the report: what ran and when, read by ``reproduce --list``."""
    runs = meta.get("runs", [])
    record = {"experiment": exp.name, "budget": meta["budget"], "variant": meta["variant"],
              "seeds": list(meta["seeds"]), "device": meta.get("device", ""),
              "started": meta.get("started", ""),
              "finished": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
              "compute_seconds": meta.get("compute_seconds", 0.0),
              "wall_seconds": meta.get("seconds", 0.0), "runs": runs,
              "runs_not_run": [r for r in meta.get("all_runs", runs) if r not in runs],
              "command": meta.get("command", "")}
    write_text_atomic(out_dir / f"{exp.name}.json",
                      json.dumps(record, indent=2, ensure_ascii=False) + "\n")


def _intro(exp: Experiment, meta: dict[str, Any]) -> list[str]:
    """The title; the budget, variant, seeds, device, time, runs and command that ran; what
    the budget changes from ``full``."""
    variant, budget = meta["variant"], meta["budget"]
    md = [f"# {exp.title}\n",
          f"Reproduces **{exp.reproduces}**. Budget **{budget}**, variant **{variant}** "
          f"({exp.variants[variant]}), seeds {meta['seeds']}, device {meta['device']}; "
          f"the cells took {meta.get('compute_seconds', 0) / 60:.1f} min when they ran "
          f"(this invocation: {meta['seconds'] / 60:.1f} min wall, reusing finished "
          "cells).\n"]
    if meta.get("runs") and meta["runs"] != meta.get("all_runs", meta["runs"]):
        skipped = [r for r in meta["all_runs"] if r not in meta["runs"]]
        md.append(f"Ran only the runs {meta['runs']}; not run: {skipped} (their cells show –).\n")
    if meta.get("command"):
        md.append(f"Command: `{meta['command']}`\n")
    changes = budget_changes(exp, variant, budget)
    if changes:
        md.append(f"The `{budget}` budget is sized for a 2-core CPU: it shrinks epochs and, "
                  "where the experiment says so, data sizes, never the method; against `full` "
                  "it changes:\n")
        md += [f"- {c}" for c in changes] + [""]
    if exp.gpu_estimate:
        md.append(f"`full` budget: {exp.gpu_estimate}\n")
    return md


def _comparison(frame: pd.DataFrame) -> list[str]:
    """Ours beside the published numbers: the table, and the largest Δ under the protocol."""
    compared = frame[frame["delta"].notna()] if len(frame) else frame
    worst = compared.loc[compared["delta"].abs().idxmax()] if len(compared) else None
    md = ["## Ours beside the published numbers\n",
          "Mean ± sample std over seeds, and in brackets the 95% interval of our mean: a "
          "bootstrap over the test examples and the seeds, or a t interval over the seeds "
          "where per-example values are missing (a number not computed from test examples, "
          "such as a parameter count, or a run written before they were kept; none for one "
          "such seed). Δ = ours − published, shown only where the run followed the published "
          "protocol, with whether the published value lies within our interval (the noise of "
          "our number; the published number's own is not counted); a published value in "
          "parentheses held under another protocol (what differs is listed below).\n"]
    rows = []
    for _, line in frame.iterrows():
        paper = _fmt(line["paper"], line["unit"])
        if line["differs"] and not math.isnan(line["paper"]):
            paper = f"({paper})"
        rows.append([line["row"], line["column"], line["model"], _ours(line), paper,
                     delta_text(line)])
    md.append(md_table(["row", "column", "model", "ours", "published", "Δ"], rows))
    if worst is not None:
        md.append(f"Largest |Δ|: {worst['delta']:+.2f} ({worst['row']}, {worst['column']}); "
                  f"{len(compared)} of {int(frame['paper'].notna().sum())} published numbers "
                  f"compared under their protocol; {outside_text(compared)}.\n")
    return md


def _other_protocols(frame: pd.DataFrame) -> list[str]:
    """The published numbers that held under another protocol, and what differs."""
    refs = frame[(frame["paper"].notna()) & (frame["differs"] != "")] if len(frame) else frame
    if not len(refs):
        return []
    md = ["## Published under another protocol\n"]
    for (row, model), group in refs.groupby(["row", "model"], sort=False):
        for differs, cells in group.groupby("differs", sort=False):
            columns = ", ".join(cells["column"])
            md.append(f"- {row} (`{model}`), {columns}: {differs}")
    return md + [""]


def _closing(exp: Experiment, figures: list[str], results: list[RunResults]) -> list[str]:
    """The figures, the experiment's notes, and the protocol that ran."""
    md = []
    if figures:
        md.append("## Figures\n")
        md += [f"![{f}]({f})" for f in figures] + [""]
    if exp.notes:
        md.append("## Notes\n")
        md += [f"- {n}" for n in exp.notes] + [""]
    md.append("## Protocol that ran\n")
    return md + _protocol_lines(results) + [""]
