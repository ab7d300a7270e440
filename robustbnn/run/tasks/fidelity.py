"""Task ``fidelity``: the model's MC predictive on the test set against the fidelity
reference's (docs/fidelity.md): top-1 agreement, total variation and KL(reference ‖ model)
(:mod:`robustbnn.metrics.fidelity`), the scores the NeurIPS 2021 approximate-inference
competition used against HMC (Wilson et al. 2022).

The model's predictive averages S_eval samples from the cell's ``eval`` stream; the
reference's averages ``reference_samples`` of its samples from the cell's ``reference``
stream (for ``hmc``, 800 = every stored draw, each once, when one call holds them all, as
it does for the fidelity suite's 1,000 test points within ``memory_mb``). The reference is
the model trained at ``reference_seed`` (its training cell is a dependency), whatever the
run's seed.
"""

from __future__ import annotations

from robustbnn.contract.predict import sample_probs
from robustbnn.metrics.fidelity import agreement, kl_from_reference, total_variation
from robustbnn.results import names as N
from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context, spec_at_seed
from robustbnn.run.tasks._scoring import no_grad_probs
from robustbnn.run.tasks.train import trained_model

__all__ = ["run"]


def run(ctx: Context) -> CellOutcome:
    """Agreement, total variation and KL of ``ctx.model`` against the reference."""
    name, seed = ctx.params[N.REFERENCE], ctx.params["reference_seed"]
    reference = trained_model(spec_at_seed(ctx.spec, seed), name, None)
    x = ctx.data.test.x
    p = no_grad_probs(ctx, x, "eval").mean(0)  # (B, C)
    q = sample_probs(reference, x, ctx.params["reference_samples"],
                     generator=ctx.gen("reference"),
                     memory_mb=ctx.params["memory_mb"]).mean(0)  # (B, C)
    knobs = {N.S_EVAL: ctx.cfg.s_eval, N.REFERENCE: name}
    return CellOutcome(rows=[
        ctx.result(N.FIDELITY, knobs, "", N.AGREEMENT, float(agreement(p, q))),
        ctx.result(N.FIDELITY, knobs, "", N.TOTAL_VARIATION, float(total_variation(p, q))),
        ctx.result(N.FIDELITY, knobs, "", N.KL_FROM_REFERENCE, float(kl_from_reference(p, q))),
    ])
