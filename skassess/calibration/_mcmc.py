"""MCMC through emcee, with the convergence diagnostics skassess reports.

Each chain is an emcee ensemble of its own; all the chains run inside one
emcee sampler (a move that keeps each ensemble's walkers to themselves), so the
log density is evaluated once per half-step for every walker of every chain.
R-hat and the multi-chain ESS are written here (Vehtari et al. 2021) because
the library that ships them, ArviZ, would bring xarray and matplotlib into the
core dependencies; the ESS also handles the walkers of an ensemble, which are
not independent chains.
"""

import emcee
import numpy as np
from scipy.fft import next_fast_len
from scipy.special import ndtri
from scipy.stats import rankdata

from ..exceptions import ConvergenceWarning
from ..utils._warnings import warn

#: Thresholds of the convergence warning.
#: NUTS trees are capped at this depth during the warm-up (2**6 - 1 leapfrog steps):
#: before the metric is adapted, trees grow deep and the warm-up would cost
#: three times the kept iterations; the kept iterations use mici's cap (10).
WARM_UP_TREE_DEPTH = 6
MAX_RHAT = 1.01
MIN_ESS = 100

#: Most numbers an emcee chain stores (256 MiB at 8 bytes): beyond, every k-th step
#: is stored. The samples, the constrained draws and the monitored quantities
#: each take about this much, so the fit stays within a few GiB at any size.
MAX_STORED = 2**25


def _rhat_basic(chains):
    """Classic R-hat of ``(n_steps, n_chains, n_params)``, split in halves."""
    n = chains.shape[0] // 2
    split = np.concatenate([chains[:n], chains[n : 2 * n]], axis=1)
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


def _autocov(x):
    """Biased autocovariance of each chain along axis 1 of ``(n_chains, n, k)``, by FFT."""
    n = x.shape[1]
    x = x - x.mean(axis=1, keepdims=True)
    size = next_fast_len(2 * n)
    f = np.fft.rfft(x, n=size, axis=1)
    return np.fft.irfft(f * np.conj(f), n=size, axis=1)[:, :n] / n


def _ess_tau(x):
    """Integrated autocorrelation time of the chains ``(n_chains, n, k)``, per column.

    Vehtari et al. (2021), eq. 10-11: the autocorrelations combine the chains'
    autocovariances with the between-chain variance (chains that disagree
    look autocorrelated), summed in pairs up to the first negative pair
    (Geyer's initial positive sequence), the pairs made non-increasing
    (initial monotone sequence). Returns ``(tau, var_plus)``.
    """
    m, n, _ = x.shape
    acov = _autocov(x)
    within = acov[:, 0].mean(axis=0) * n / (n - 1)
    var_plus = within * (n - 1) / n
    if m > 1:
        var_plus = var_plus + x.mean(axis=1).var(axis=0, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = 1.0 - (within - acov.mean(axis=0)) / var_plus  # (n, k), rho[0] = 1
    pairs = rho[: 2 * (n // 2)].reshape(n // 2, 2, -1).sum(axis=1)
    positive = np.cumprod(pairs > 0.0, axis=0).astype(bool)
    monotone = np.minimum.accumulate(np.where(positive, pairs, np.inf), axis=0)
    tau = -1.0 + 2.0 * np.where(positive, monotone, 0.0).sum(axis=0)
    tau = np.maximum(tau, 1.0 / np.log10(m * n))
    # nothing moved anywhere: no autocorrelation estimate, one draw per chain
    return np.where(var_plus > 0, tau, n), var_plus


def _ess_of(values):
    """ESS of ``values`` ``(n_chains, n_steps, n_walkers, k)`` for estimating their mean.

    The walkers of one emcee ensemble are not independent chains: each step's
    walker average is one draw of a chain, whose autocorrelation (across the
    independent ensembles, split in halves) gives the variance of the overall
    mean, ``var_plus * tau / n``; the ESS is the samples' variance over it, at most
    the number of samples. Identical walkers count once; independent ones each.
    """
    n_chains, n_steps, n_walkers, _ = values.shape
    half = n_steps // 2
    steps = values.mean(axis=2)
    split = np.concatenate([steps[:, :half], steps[:, half : 2 * half]], axis=0)
    tau, var_plus = _ess_tau(split)
    total = values.reshape(-1, values.shape[-1]).var(axis=0)
    n = split.shape[0] * half
    with np.errstate(invalid="ignore", divide="ignore"):
        ess = np.where(var_plus > 0, n * total / (var_plus * tau), split.shape[0])
    return np.minimum(ess, n_chains * n_steps * n_walkers)


def effective_sample_size(samples):
    """Multi-chain bulk and tail ESS (Vehtari et al. 2021), the smaller of the two.

    ``samples`` has shape ``(n_chains, n_steps, n_walkers, n_params)``; each
    chain is an independent emcee ensemble (or one NUTS chain, one walker).
    Bulk: the ESS of the rank-normalized samples. Tail: the smaller ESS of
    the indicators of the 5 % and 95 % quantiles. Chains that disagree, stuck
    walkers and walkers that copy each other all lower it.
    """
    samples = np.asarray(samples, dtype=np.float64)
    if samples.shape[1] < 4:
        return np.ones(samples.shape[-1])
    flat = samples.reshape(-1, samples.shape[-1])
    bulk = _ess_of(_rank_normal(flat).reshape(samples.shape))
    low, high = np.quantile(flat, [0.05, 0.95], axis=0)
    tail = np.minimum(
        _ess_of((samples <= low).astype(np.float64)), _ess_of((samples >= high).astype(np.float64))
    )
    return np.minimum(bulk, tail)


class _BlockDEMove(emcee.moves.DEMove):
    """emcee's differential-evolution move on ``n_blocks`` independent ensembles at once.

    The sampler's walkers are ``n_blocks`` consecutive blocks, one ensemble each. Each
    half-step splits every block in two at random and moves one half of each block by
    the difference of two distinct walkers of the other half of the same block (Nelson
    et al. 2013, emcee's ``DEMove``), so no ensemble sees another's walkers and the
    chains stay independent for R-hat. emcee has no such move: its moves mix the whole
    ensemble, and one sampler per chain paid emcee's per-step overhead and a log-density
    call per chain and half-step (most of a small fit's time). The acceptance is
    vectorized over walkers (emcee loops over them in Python).
    """

    def __init__(self, n_blocks):
        super().__init__()
        self.n_blocks = n_blocks

    def propose(self, model, state):
        n_total, n_dim = state.coords.shape
        self.setup(state.coords)
        n_blocks, random = self.n_blocks, model.random
        w = n_total // n_blocks
        # each block split in halves at random, as RedBlueMove does for one ensemble;
        # each half's walkers in their order in the block (the order of the mask)
        perm = np.argsort(random.rand(n_blocks, w), axis=1)
        halves = [
            np.sort(perm[:, : (w + 1) // 2], axis=1),
            np.sort(perm[:, (w + 1) // 2 :], axis=1),
        ]
        block = np.arange(n_blocks)[:, None]
        offset = block * w
        accepted = np.zeros(n_total, dtype=bool)
        for moving, other in (halves, halves[::-1]):
            coords = state.coords.reshape(n_blocks, w, n_dim)
            n_s, n_c = moving.shape[1], other.shape[1]
            # two distinct walkers of the other half of the same block, in random order
            first = random.randint(n_c, size=(n_blocks, n_s))
            second = (first + 1 + random.randint(n_c - 1, size=(n_blocks, n_s))) % n_c
            diffs = coords[block, other[block, second]] - coords[block, other[block, first]]
            gamma = self.g0 * (1 + self.sigma * random.randn(n_blocks, n_s, 1))
            q = (coords[block, moving] + gamma * diffs).reshape(-1, n_dim)
            new_log_probs, new_blobs = model.compute_log_prob_fn(q)
            subset = np.zeros(n_total, dtype=bool)
            subset[(offset + moving).ravel()] = True
            with np.errstate(invalid="ignore"):  # -inf - -inf: never accepted
                accept = new_log_probs - state.log_prob[subset] > np.log(random.rand(len(q)))
            accepted[subset] = accept
            new_state = emcee.State(q, log_prob=new_log_probs, blobs=new_blobs)
            state = self.update(state, new_state, accepted, subset)
        return state, accepted


def sample_mcmc(
    log_prob,
    initial,
    *,
    n_burn,
    n_steps,
    max_steps,
    target_ess,
    rng,
    progress=False,
    monitor=None,
    max_stored=MAX_STORED,
):
    """Independent emcee ensembles, one per chain, with differential-evolution moves.

    ``initial`` has shape ``(n_chains, n_walkers, n_dim)``: each chain is an
    ensemble of its own (walkers of one ensemble interact, so R-hat is
    computed across ensembles, not walkers; one emcee sampler runs them all
    with :class:`_BlockDEMove`). After ``n_burn`` discarded
    steps, ``n_steps`` are kept; while the smallest ESS is below
    ``target_ess`` or an R-hat is above 1.01, every chain grows by half, up to
    ``max_steps``. When ``max_steps`` steps of every walker would hold more than
    ``max_stored`` numbers, only every ``thin``-th step is stored (the
    smallest ``thin`` that fits; the steps are still taken), so memory stays
    bounded however many walkers and parameters there are.
    ``log_prob`` maps ``(n, n_dim)`` to ``(n,)``. ``monitor``, if given, maps
    the kept samples to the quantities ``(n_chains, n_kept, n_walkers, k)``
    whose R-hat and ESS are checked (default: the samples themselves), so the
    caller can check exactly what it reports. Returns the kept samples
    ``(n_chains, n_kept, n_walkers, n_dim)`` and the R-hat and ESS of the
    monitored quantities on them.
    """
    monitor = monitor or (lambda kept: kept)
    n_chains, n_walkers, n_dim = np.shape(initial)
    thin = max(1, -(-n_chains * max_steps * n_walkers * n_dim // max_stored))
    n_stored, max_stored_steps = max(n_steps // thin, 1), max(max_steps // thin, 1)
    sampler = emcee.EnsembleSampler(
        n_chains * n_walkers,
        n_dim,
        log_prob,
        vectorize=True,
        # Differential-evolution moves mixed about twice as fast as emcee's
        # default stretch move on the hierarchical calibration posterior
        # (autocorrelation time about 45 steps against 110).
        moves=_BlockDEMove(n_chains),
    )
    sampler.random_state = np.random.RandomState(rng.integers(2**31 - 1)).get_state()

    def bar(what):  # shown only when a run takes over 2 s
        return {
            "progress": progress,
            "progress_kwargs": {"delay": 2, "leave": False, "desc": f"MCMC {what}"},
        }

    start = np.reshape(initial, (n_chains * n_walkers, n_dim))
    state = sampler.run_mcmc(start, n_burn, store=False, **bar("burn-in")) if n_burn else start
    state = sampler.run_mcmc(state, n_stored, thin_by=thin, **bar("sampling"))

    def chains():
        kept = sampler.get_chain()  # (n_kept, n_chains * n_walkers, n_dim)
        return kept.reshape(len(kept), n_chains, n_walkers, n_dim).transpose(1, 0, 2, 3)

    def diagnose(kept):
        watched = monitor(kept)
        return split_rhat(watched), effective_sample_size(watched)

    kept = chains()
    rhat, ess = diagnose(kept)
    while kept.shape[1] < max_stored_steps and (ess.min() < target_ess or rhat.max() > MAX_RHAT):
        more = min(max(kept.shape[1] // 2, 1), max_stored_steps - kept.shape[1])
        state = sampler.run_mcmc(state, more, thin_by=thin, **bar("more steps"))
        kept = chains()
        rhat, ess = diagnose(kept)
    return kept, rhat, ess


def warn_convergence(rhat, ess, names, owner, hint=""):
    """ConvergenceWarning naming the worst parameter when R-hat or ESS is off."""
    bad = (rhat > MAX_RHAT) | (ess < MIN_ESS)
    if not bad.any():
        return
    i = int(np.argmax(np.where(bad, rhat - ess / 1e6, -np.inf)))
    warn(
        f"{owner}: the sampler may not have converged: {names[i]} has R-hat "
        f"{rhat[i]:.3f} and ESS {ess[i]:.0f} (wanted: R-hat <= {MAX_RHAT}, ESS >= "
        f"{MIN_ESS}). Increase n_steps or max_steps{hint}.",
        ConvergenceWarning,
    )


def require_mici():
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


def sample_nuts(
    log_prob_grad,
    initial,
    *,
    n_burn,
    n_steps,
    max_steps,
    target_ess,
    rng,
    n_jobs=1,
    progress=False,
    monitor=None,
):
    """Independent NUTS chains (mici's dynamic multinomial HMC), one per initial point.

    The warm-up (``n_burn`` iterations) adapts the step size by dual averaging
    and a diagonal metric from the chains' variance (Stan's windowed scheme),
    with trees at most ``WARM_UP_TREE_DEPTH`` deep; then ``n_steps`` iterations
    are kept, and every chain grows by half while the smallest ESS is below
    ``target_ess`` or an R-hat above 1.01, up to ``max_steps``.
    ``log_prob_grad`` maps one point ``(n_dim,)`` to ``(log p, gradient)``;
    ``initial`` has shape ``(n_chains, n_dim)``. Returns the kept samples as
    ``(n_chains, n_kept, 1, n_dim)`` (one walker per chain, the layout of
    :func:`sample_mcmc`) and the R-hat and ESS of the monitored quantities.
    """
    mici = require_mici()
    monitor = monitor or (lambda kept: kept)
    density = _NegLogDensity(log_prob_grad)
    system = mici.systems.EuclideanMetricSystem(
        neg_log_dens=density.value, grad_neg_log_dens=density.value_and_grad
    )
    integrator = mici.integrators.LeapfrogIntegrator(system)
    sampler = mici.samplers.DynamicMultinomialHMC(
        system, integrator, np.random.default_rng(rng.integers(2**63))
    )
    common = {"n_worker": n_jobs, "display_progress": progress, "trace_funcs": [_trace_position]}
    transition = sampler.transitions["integration_transition"]
    depth = transition.max_tree_depth
    with np.errstate(over="ignore", invalid="ignore"):  # rejected leapfrog steps
        states = list(initial)
        if n_burn:
            transition.max_tree_depth = min(depth, WARM_UP_TREE_DEPTH)
            states = sampler.sample_chains(
                n_burn,
                0,
                states,
                adapters=[
                    mici.adapters.DualAveragingStepSizeAdapter(0.8),
                    mici.adapters.OnlineVarianceMetricAdapter(),
                ],
                **common,
            ).final_states
            transition.max_tree_depth = depth
        out = sampler.sample_chains(0, n_steps, states, **common)
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
