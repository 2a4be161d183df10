"""MCMC through emcee, with the convergence diagnostics skassess reports.

Each chain is an emcee ensemble of its own; the log density is vectorized
over walkers. R-hat is written here (about twenty lines, Vehtari et al.
2021) because the library that ships it, ArviZ, would bring xarray and
matplotlib into the core dependencies; the effective sample size uses emcee's
own integrated autocorrelation time.
"""

import logging

import emcee
import numpy as np
from scipy.special import ndtri
from scipy.stats import rankdata

from ..exceptions import ConvergenceWarning
from ..utils import warn

#: Thresholds of the convergence warning.
MAX_RHAT = 1.01
MIN_ESS = 100


def _rhat_basic(chains):
    """Classic R-hat of ``(n_steps, n_chains, n_params)``, split in halves."""
    n = chains.shape[0] // 2
    split = np.concatenate([chains[:n], chains[n:2 * n]], axis=1)
    within = split.var(axis=0, ddof=1).mean(axis=0)
    between = n * split.mean(axis=0).var(axis=0, ddof=1)
    var = (n - 1) / n * within + between / n
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(within > 0, np.sqrt(var / within), 1.0)


def _rank_normal(x):
    flat = x.reshape(-1, x.shape[-1])
    r = rankdata(flat, axis=0)
    return ndtri((r - 0.375) / (flat.shape[0] + 0.25)).reshape(x.shape)


def split_rhat(samples):
    """Rank-normalized split R-hat, the max of the bulk and the folded (tail) versions.

    ``samples`` has shape ``(n_chains, n_steps, n_walkers, n_params)``: the
    walkers of one ensemble, step by step, form one chain.
    """
    samples = np.asarray(samples, dtype=np.float64)
    n_chains, n_steps, n_walkers, n_params = samples.shape
    chains = samples.reshape(n_chains, n_steps * n_walkers, n_params).transpose(1, 0, 2)
    bulk = _rhat_basic(_rank_normal(chains))
    folded = np.abs(chains - np.median(chains.reshape(-1, chains.shape[-1]), axis=0))
    tail = _rhat_basic(_rank_normal(folded))
    return np.maximum(bulk, tail)


def effective_sample_size(samples):
    """``n_steps * n_walkers * n_chains / tau`` with emcee's integrated autocorrelation time.

    ``samples`` has shape ``(n_chains, n_steps, n_walkers, n_params)``.
    """
    samples = np.asarray(samples, dtype=np.float64)
    chains = samples.transpose(1, 0, 2, 3).reshape(samples.shape[1], -1, samples.shape[3])
    logger = logging.getLogger("emcee.autocorr")
    level = logger.level
    logger.setLevel(logging.ERROR)  # the "chain is short" note is ours to judge
    try:
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = emcee.autocorr.integrated_time(chains, quiet=True)
    finally:
        logger.setLevel(level)
    # A parameter that never moved has no autocorrelation estimate: count the
    # whole chain as one sample per walker.
    tau = np.where(np.isfinite(tau), np.maximum(tau, 1.0), chains.shape[0])
    return chains.shape[0] * chains.shape[1] / tau


def sample_mcmc(log_prob, initial, *, n_burn, n_steps, max_steps, target_ess, rng,
                progress=False, monitor=None):
    """Independent emcee ensembles, one per chain, with differential-evolution moves.

    ``initial`` has shape ``(n_chains, n_walkers, n_dim)``: each chain is an
    ensemble of its own (walkers of one ensemble interact, so R-hat is
    computed across ensembles, not walkers). After ``n_burn`` discarded
    steps, ``n_steps`` are kept; while the smallest ESS is below
    ``target_ess`` or an R-hat is above 1.01, every chain grows by half, up to
    ``max_steps``.
    ``log_prob`` maps ``(n, n_dim)`` to ``(n,)``. ``monitor``, if given, maps
    the kept samples to the quantities ``(n_chains, n_kept, n_walkers, k)``
    whose R-hat and ESS are checked (default: the samples themselves), so the
    caller can check exactly what it reports. Returns the kept samples
    ``(n_chains, n_kept, n_walkers, n_dim)`` and the R-hat and ESS of the
    monitored quantities on them.
    """
    monitor = monitor or (lambda kept: kept)
    samplers, states = [], []
    for start in initial:
        n_walkers, n_dim = start.shape
        sampler = emcee.EnsembleSampler(
            n_walkers, n_dim, log_prob, vectorize=True,
            # Differential-evolution moves mixed about twice as fast as emcee's
            # default stretch move on the hierarchical calibration posterior
            # (autocorrelation time about 45 steps against 110).
            moves=emcee.moves.DEMove(),
        )
        sampler.random_state = np.random.RandomState(rng.integers(2**31 - 1)).get_state()
        state = sampler.run_mcmc(start, n_burn, progress=progress) if n_burn else start
        sampler.reset()
        states.append(sampler.run_mcmc(state, n_steps, progress=progress))
        samplers.append(sampler)

    def chains():
        return np.stack([s.get_chain() for s in samplers])

    def diagnose(kept):
        watched = monitor(kept)
        return split_rhat(watched), effective_sample_size(watched)

    kept = chains()
    rhat, ess = diagnose(kept)
    while kept.shape[1] < max_steps and (ess.min() < target_ess or rhat.max() > MAX_RHAT):
        more = min(max(kept.shape[1] // 2, 1), max_steps - kept.shape[1])
        for i, sampler in enumerate(samplers):
            states[i] = sampler.run_mcmc(states[i], more, progress=progress)
        kept = chains()
        rhat, ess = diagnose(kept)
    return kept, rhat, ess


def warn_convergence(rhat, ess, names, owner):
    """ConvergenceWarning naming the worst parameter when R-hat or ESS is off."""
    bad = (rhat > MAX_RHAT) | (ess < MIN_ESS)
    if not bad.any():
        return
    i = int(np.argmax(np.where(bad, rhat - ess / 1e6, -np.inf)))
    warn(
        f"{owner}: the sampler may not have converged: {names[i]} has R-hat "
        f"{rhat[i]:.3f} and ESS {ess[i]:.0f} (wanted: R-hat <= {MAX_RHAT}, ESS >= "
        f"{MIN_ESS}). Increase n_steps or max_steps.",
        ConvergenceWarning,
    )


def _require_mici():
    try:
        import mici
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError(
            "sampler='nuts' needs the mici package: pip install 'skassess[nuts]' "
            "(or pip install mici)."
        ) from None
    return mici


class _NegLogDensity:
    """``-log p`` and its gradient for mici, from ``log_prob_grad(q) -> (log p, grad)``.

    A class rather than closures so that chains can run in worker processes.
    """

    def __init__(self, log_prob_grad):
        self.log_prob_grad = log_prob_grad

    def value(self, q):
        return -self.log_prob_grad(q)[0]

    def value_and_grad(self, q):
        value, grad = self.log_prob_grad(q)
        return -grad, -value


def _trace_position(state):
    return {"pos": state.pos}


def sample_nuts(log_prob_grad, initial, *, n_burn, n_steps, max_steps, target_ess, rng,
                n_jobs=1, progress=False, monitor=None):
    """Independent NUTS chains (mici's dynamic multinomial HMC), one per initial point.

    The warm-up (``n_burn`` iterations) adapts the step size by dual averaging
    and a diagonal metric from the chains' variance (Stan's windowed scheme);
    then ``n_steps`` iterations are kept, and every chain grows by half while
    the smallest ESS is below ``target_ess`` or an R-hat above 1.01, up to
    ``max_steps``. ``log_prob_grad`` maps one point ``(n_dim,)`` to ``(log p,
    gradient)``; ``initial`` has shape ``(n_chains, n_dim)``. Returns the kept
    samples as ``(n_chains, n_kept, 1, n_dim)`` (one walker per chain, the
    layout of :func:`sample_mcmc`) and the R-hat and ESS of the monitored
    quantities.
    """
    mici = _require_mici()
    monitor = monitor or (lambda kept: kept)
    density = _NegLogDensity(log_prob_grad)
    system = mici.systems.EuclideanMetricSystem(
        neg_log_dens=density.value, grad_neg_log_dens=density.value_and_grad)
    integrator = mici.integrators.LeapfrogIntegrator(system)
    sampler = mici.samplers.DynamicMultinomialHMC(
        system, integrator, np.random.default_rng(rng.integers(2**63)))
    common = {"n_worker": n_jobs, "display_progress": progress,
              "trace_funcs": [_trace_position]}
    with np.errstate(over="ignore", invalid="ignore"):  # rejected leapfrog steps
        out = sampler.sample_chains(
            n_burn, n_steps, list(initial),
            adapters=[mici.adapters.DualAveragingStepSizeAdapter(0.8),
                      mici.adapters.OnlineVarianceMetricAdapter()], **common)
    traces = [np.asarray(out.traces["pos"])]

    def diagnose():
        kept = np.concatenate(traces, axis=1)[:, :, None, :]
        watched = monitor(kept)
        return kept, split_rhat(watched), effective_sample_size(watched)

    kept, rhat, ess = diagnose()
    while kept.shape[1] < max_steps and (ess.min() < target_ess or rhat.max() > MAX_RHAT):
        more = min(max(kept.shape[1] // 2, 1), max_steps - kept.shape[1])
        with np.errstate(over="ignore", invalid="ignore"):
            out = sampler.sample_chains(0, more, out.final_states, **common)
        traces.append(np.asarray(out.traces["pos"]))
        kept, rhat, ess = diagnose()
    return kept, rhat, ess
