"""The HMC reference posterior of issue 32: the reference task, the sampler, its diagnostics.

``reference_task`` fixes the task as data (downsampled MNIST, a small MLP, a Gaussian prior,
full-batch likelihood); ``hmc`` samples its posterior with Pyro's NUTS and turns the draws into
the reference predictive; ``diagnostics`` computes split R-hat and ESS per predictive
probability and refuses chains that have not mixed. Pyro is imported only when a chain runs.
"""

from __future__ import annotations

from robustbnn.posterior.diagnostics import (
    DEFAULT_RHAT_BOUND,
    ChainsNotMixedError,
    MixingSummary,
    check_mixed,
    ess,
    split_rhat,
    summarize,
)
from robustbnn.posterior.hmc import (
    ChainStats,
    HMCSamples,
    NUTSConfig,
    initial_points,
    predictive_probs,
    reference_predictive,
    run_nuts,
    sample_posterior,
)
from robustbnn.posterior.reference_task import (
    ReferenceData,
    ReferenceTask,
    prepare_reference_data,
)

__all__ = [
    "DEFAULT_RHAT_BOUND",
    "ChainStats",
    "ChainsNotMixedError",
    "HMCSamples",
    "MixingSummary",
    "NUTSConfig",
    "initial_points",
    "ReferenceData",
    "ReferenceTask",
    "check_mixed",
    "ess",
    "predictive_probs",
    "prepare_reference_data",
    "reference_predictive",
    "run_nuts",
    "sample_posterior",
    "split_rhat",
    "summarize",
]
