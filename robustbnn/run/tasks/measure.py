"""Task ``measure``: one plug-in uncertainty measure on one OOD set against the
in-distribution split (``ood_in_split``).

Built-in measures are computed inside the ``clean``/``indist`` and ``ood`` cells; a measure
registered later (``--plugin`` or an entry point) is scored here, in a cell whose id holds
its name and declared version (:class:`robustbnn.ood.Measure`), so registering it computes
its rows and reuses every other cell. The cell draws its own S_eval samples of the
in-distribution inputs (stream ``eval/in``) and of the set (``eval/out``), with logits only
when the measure asks for them.
"""

from __future__ import annotations

import torch

from robustbnn.contract.predict import sample_probs
from robustbnn.ood.uncertainty import measure
from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context, ood_images
from robustbnn.run.tasks._scoring import ranking_rows

__all__ = ["run"]


def run(ctx: Context) -> CellOutcome:
    """Ranking rows of the measure on the set (dataset = the set's name); arrays =
    ``in/<measure>`` and ``out/<measure>``, the per-example scores."""
    p = ctx.params
    name, m = p["set"], measure(p["measure"])
    x_in = getattr(ctx.data, p["in_split"]).x
    x_out = ood_images(ctx.spec, name)
    scores = {}
    for side, x in (("in", x_in), ("out", x_out)):
        with torch.no_grad():
            out = sample_probs(ctx.model, x, ctx.cfg.s_eval, generator=ctx.gen("eval", side),
                               memory_mb=p["memory_mb"], logits=m.needs_logits)
            probs, logits = out if m.needs_logits else (out, None)
            scores[side] = {p["measure"]: m(probs, logits).double().cpu().numpy()}
    rows = ranking_rows(ctx, scores["in"], scores["out"], dataset=name)
    arrays = {f"{side}/{p['measure']}": s[p["measure"]] for side, s in scores.items()}
    return CellOutcome(rows=rows, arrays=arrays)
