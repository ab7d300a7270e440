"""Task ``sanity``: the Carlini et al. (2019) checks that attack the model again.

* ``beats_random_noise``: accuracy under ±eps random sign noise minus accuracy under FGSM at
  eps (passed when ≥ −tol);
* ``fixed_randomness_succeeds``: the accuracy drop FGSM causes on one frozen posterior sample
  (passed when positive).
"""

from __future__ import annotations

from robustbnn.attacks.sanity import beats_random_noise, fixed_randomness_succeeds
from robustbnn.contract.predict import Evaluation
from robustbnn.results import names as N
from robustbnn.run.cells import CellOutcome
from robustbnn.run.context import Context
from robustbnn.run.tasks.fgsm import TOL, attack_of, check_rows

__all__ = ["run"]


def run(ctx: Context) -> CellOutcome:
    """The two attack-based sanity checks of one FGSM setting on the first ``n`` test points."""
    attack = attack_of(ctx.params)
    x, y = ctx.test_head(ctx.params[N.N])
    knobs = {N.EPS: attack.eps, N.S_ATTACK: attack.n_samples, N.S_EVAL: ctx.cfg.s_eval,
             N.OBJECTIVE: attack.objective, N.LABEL: attack.label}
    attack_gen = ctx.gen("attack")
    # The default memory budget, not the cell's: these checks always evaluated at it.
    evaluation = Evaluation(ctx.cfg.s_eval, ctx.gen("eval"))
    noise = beats_random_noise(ctx.model, x, y, attack, evaluation, generator=attack_gen,
                               tol=TOL)
    frozen = fixed_randomness_succeeds(ctx.model, x, y, attack, member=ctx.gen("member"),
                                       generator=attack_gen)
    rows = check_rows(ctx, noise, "beats_random_noise", knobs)
    rows += check_rows(ctx, frozen, "fixed_randomness_succeeds", knobs)
    return CellOutcome(rows=rows)
