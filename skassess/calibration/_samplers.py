"""The MCMC samplers of :class:`HierarchicalBetaCalibrator`, as parameter objects.

The calibrator holds the model (the maps, the hierarchy, the likelihood); a
sampler holds how its posterior is drawn, as ``GaussianProcessRegressor``
holds a ``kernel``: ``HierarchicalBetaCalibrator(sampler=NUTSSampler(n_jobs=2))``.
Each sampler draws from a *target* the calibrator builds, with ``n_dim``,
``log_prob(theta)`` (emcee), ``log_prob_grad(theta)`` (NUTS) and
``initial(n, rng)`` (starting points).
"""

from numbers import Integral

from sklearn.base import BaseEstimator

from ..utils._sklearn_compat import Interval, validate_estimator_params
from ._mcmc import require_mici, sample_mcmc, sample_nuts

__all__ = ["EmceeSampler", "NUTSSampler"]

_SCHEDULE = {
    "n_chains": [Interval(Integral, 2, None, closed="left")],
    "n_burn": [Interval(Integral, 0, None, closed="left")],
    "n_steps": [Interval(Integral, 1, None, closed="left")],
    "max_steps": [Interval(Integral, 1, None, closed="left")],
    "target_ess": [Interval(Integral, 1, None, closed="left")],
    "progress": ["boolean"],
}


class _Sampler(BaseEstimator):
    _parameter_constraints = dict(_SCHEDULE)

    def _schedule(self, rng, monitor):
        return {
            "n_burn": self.n_burn,
            "n_steps": self.n_steps,
            "max_steps": max(self.max_steps, self.n_steps),
            "target_ess": self.target_ess,
            "rng": rng,
            "progress": self.progress,
            "monitor": monitor,
        }


class EmceeSampler(_Sampler):
    """Ensembles of emcee walkers, grown until R-hat and the effective sample size pass.

    Read more in the :ref:`User Guide <ug_fairness>`.

    ``n_chains`` independent ensembles of affine-invariant walkers
    (differential-evolution moves), all run by one emcee sampler, on the model with
    the population parameters integrated out; R-hat compares the ensembles. Fast
    for a few groups; with many groups ensemble moves slow down
    (:class:`NUTSSampler` is then faster).

    Parameters
    ----------
    n_chains : int, default=4
        Independent ensembles; R-hat compares them.
    n_walkers : int, default=None
        Walkers per ensemble; None: ``max(16, 4 * n_dim)`` (48 for the beta
        map and two groups). At least ``2 * n_dim``.
    n_burn : int, default=300
        Steps discarded per walker.
    n_steps : int, default=300
        Steps kept per walker at first; the chains grow by half while the
        smallest effective sample size is below ``target_ess`` or an R-hat is
        above 1.01, up to ``max_steps``. When ``max_steps`` steps of every
        walker would exceed 2**25 numbers (many groups), only every k-th step
        is stored (the smallest k that fits), so memory stays bounded.
    max_steps : int, default=3000
    target_ess : int, default=400
    progress : bool, default=True
        Progress bars (tqdm, on standard error) when a run takes over 2 s.

    Examples
    --------
    >>> from skassess.calibration import EmceeSampler, HierarchicalBetaCalibrator
    >>> cal = HierarchicalBetaCalibrator(sampler=EmceeSampler(n_steps=500))
    >>> cal.get_params()["sampler__n_steps"]
    500
    """

    _parameter_constraints = {
        **_Sampler._parameter_constraints,
        "n_walkers": [Interval(Integral, 4, None, closed="left"), None],
    }
    #: The form of the model it samples: the group parameters themselves.
    parametrization = "centered"

    def __init__(
        self,
        *,
        n_chains=4,
        n_walkers=None,
        n_burn=300,
        n_steps=300,
        max_steps=3000,
        target_ess=400,
        progress=True,
    ):
        self.n_chains = n_chains
        self.n_walkers = n_walkers
        self.n_burn = n_burn
        self.n_steps = n_steps
        self.max_steps = max_steps
        self.target_ess = target_ess
        self.progress = progress

    def check(self, n_dim, groups):
        """Refuse too few walkers for ``n_dim`` parameters, before anything is drawn."""
        validate_estimator_params(self)
        if self.n_walkers is not None and self.n_walkers < 2 * n_dim:
            raise ValueError(
                f"n_walkers={self.n_walkers} is too few for {n_dim} parameters ({groups}): "
                f"emcee's ensemble moves need at least 2 * n_dim = {2 * n_dim}; pass "
                f"n_walkers=None for {max(16, 4 * n_dim)}."
            )

    def draw(self, target, rng, monitor):
        """Sample ``target``; returns ``(chain, rhat, ess)`` as the monitor saw them."""
        n_walkers = self.n_walkers or max(16, 4 * target.n_dim)
        initial = target.initial((self.n_chains, n_walkers), rng)
        return sample_mcmc(target.log_prob, initial, **self._schedule(rng, monitor))


class NUTSSampler(_Sampler):
    """The no-U-turn sampler of ``mici`` on the non-centered model.

    Read more in the :ref:`User Guide <ug_fairness>`.

    Needs the optional ``mici`` package (``pip install 'skassess[nuts]'``).
    The gradient is written out. Its cost grows slowly with the number of
    groups: at 100 groups and 2000 labels it reached R-hat <= 1.01 and ESS >=
    400 in 23 to 42 s with ``n_jobs=2`` on four of five simulated data sets
    (36 to 80 s in one process; on the fifth a population scale had not
    converged after 3000 iterations, ``benchmarks/bench_scale.py``), where
    emcee's default ensembles (4,800 walkers) took 200 s for 300 steps and did
    not converge; for a few groups :class:`EmceeSampler` is faster.

    Parameters
    ----------
    n_chains : int, default=4
        Independent chains; R-hat compares them.
    n_burn : int, default=300
        Warm-up iterations that adapt the step size and a diagonal metric.
    n_steps : int, default=300
        Iterations kept per chain at first, grown as for
        :class:`EmceeSampler` up to ``max_steps``.
    max_steps : int, default=3000
    target_ess : int, default=400
    n_jobs : int, default=None
        Chains run in this many processes (None: 1).
    progress : bool, default=True
        Progress bars (tqdm, on standard error) when a run takes over 2 s.
    """

    _parameter_constraints = {
        **_Sampler._parameter_constraints,
        "n_jobs": [Interval(Integral, 1, None, closed="left"), None],
    }
    #: The form of the model it samples: ``(mu, log sigma, z)``, ``t = mu + sigma z``.
    parametrization = "noncentered"

    def __init__(
        self,
        *,
        n_chains=4,
        n_burn=300,
        n_steps=300,
        max_steps=3000,
        target_ess=400,
        n_jobs=None,
        progress=True,
    ):
        self.n_chains = n_chains
        self.n_burn = n_burn
        self.n_steps = n_steps
        self.max_steps = max_steps
        self.target_ess = target_ess
        self.n_jobs = n_jobs
        self.progress = progress

    def check(self, n_dim, groups):
        """Refuse a run without ``mici`` before anything is drawn."""
        validate_estimator_params(self)
        require_mici()

    def draw(self, target, rng, monitor):
        """Sample ``target``; returns ``(chain, rhat, ess)`` as the monitor saw them."""
        return sample_nuts(
            target.log_prob_grad,
            target.nuts_initial(self.n_chains, rng),
            n_jobs=self.n_jobs or 1,
            **self._schedule(rng, monitor),
        )
