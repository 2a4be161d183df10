"""Drift generators: splitters that yield (reference, batch) index pairs under covariate shift.

Two resampling schemes of Elder et al. (AAAI 2021), usable on their own to
stress-test any model: split a labeled data set with them, fit or calibrate on
the reference rows, and see how a model (or a performance predictor) does on
the drifted batch.

- :class:`LinearSkewSplit` (their Algorithm 1): a feature and a threshold cut
  the rows into two buckets A and B; the reference takes a share ``R`` of its
  rows from A and the batch a share ``1 - R``. ``R = 0.5`` is no drift;
  ``R = 0`` or ``1`` leaves no overlap on that feature.
- :class:`NearestNeighborsSplit` (their Algorithm 2): a random anchor row
  and its nearest (or furthest) neighbours are removed from the reference or
  from the batch, as when a population appears in, or vanishes from,
  production traffic.

Both follow scikit-learn's splitter protocol (``split(X, y, groups)`` and
``get_n_splits``) and are seeded; rows left out by a scenario are in neither
set.
"""

from numbers import Integral, Real

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from ..utils._sklearn_compat import Interval, validate_parameter_constraints

__all__ = ["LINEAR_SKEW_RATIOS", "LinearSkewSplit", "NearestNeighborsSplit"]

#: The sampling ratios of the paper's linear-skew experiments, as shares of bucket A.
LINEAR_SKEW_RATIOS = (0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)

_SHARE = Interval(Real, 0, 1, closed="neither")


class _Splitter:
    """Parameter validation and the repr of scikit-learn's splitters."""

    _parameter_constraints: dict = {}

    def _validate(self):
        validate_parameter_constraints(
            self._parameter_constraints,
            {k: getattr(self, k) for k in self._parameter_constraints},
            caller_name=type(self).__name__,
        )

    def __repr__(self):
        params = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._parameter_constraints)
        return f"{type(self).__name__}({params})"

    def split(self, X, y=None, groups=None):
        """Yield ``(reference, batch)`` row indices, one pair per scenario.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            The rows to split (features only; the labels are not used).
        y, groups : ignored
            Present for the scikit-learn splitter protocol.

        Yields
        ------
        reference : ndarray of int
            Indices of the reference (labeled, pre-drift) rows, sorted.
        batch : ndarray of int
            Indices of the drifted batch, sorted, disjoint from ``reference``.
        """
        self._validate()
        yield from self._split(X)


def _numeric_matrix(X, name="X"):
    """``X`` as a float matrix (a DataFrame must be numeric), NaN allowed."""
    if isinstance(X, pd.DataFrame):
        bad = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
        if bad:
            raise ValueError(
                f"{name} must have numeric columns to measure distances; column {bad[0]!r} "
                f"has dtype {X[bad[0]].dtype}. Encode it first (e.g. OrdinalEncoder)."
            )
        X = X.to_numpy(dtype=np.float64, na_value=np.nan)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[0] < 4:
        raise ValueError(f"{name} must be 2-D with at least 4 rows; got shape {X.shape}.")
    return X


def _column(X, feature):
    """One column of ``X`` (by position, or by name for a DataFrame) as floats."""
    if isinstance(X, pd.DataFrame):
        if isinstance(feature, str):
            if feature not in X.columns:
                raise ValueError(f"feature {feature!r} is not a column of X.")
            col = X[feature]
        else:
            col = X.iloc[:, feature]
        if not pd.api.types.is_numeric_dtype(col):
            # a categorical feature: bucket A is its most frequent value
            return (col == col.mode(dropna=True).iloc[0]).to_numpy(dtype=bool)
        return col.to_numpy(dtype=np.float64, na_value=np.nan)
    if isinstance(feature, str):
        raise ValueError(f"feature {feature!r} is a column name, but X is not a DataFrame.")
    X = np.asarray(X)
    if X.ndim != 2 or not -X.shape[1] <= feature < X.shape[1]:
        raise ValueError(f"feature {feature!r} is not a column of X (shape {X.shape}).")
    return X[:, feature].astype(np.float64)


def _buckets(values, feature):
    """Rows of bucket A (at or below the median; a boolean mask: True) and B, NaN rows in B."""
    if values.dtype == bool:
        if values.all() or not values.any():
            raise ValueError(f"feature {feature!r} is constant; it cannot split the rows.")
        return np.flatnonzero(values), np.flatnonzero(~values)
    finite = values[~np.isnan(values)]
    if finite.size == 0 or finite.min() == finite.max():
        raise ValueError(f"feature {feature!r} is constant; it cannot split the rows.")
    t = np.median(finite)
    in_a = values <= t
    if in_a.all() or not in_a.any():  # ties at the median: split below it
        in_a = values < t
    return np.flatnonzero(in_a), np.flatnonzero(~in_a)


class LinearSkewSplit(_Splitter):
    """Linear-skew drift (Elder et al. 2021, Algorithm 1) as a seeded splitter.

    Read more in the :ref:`User Guide <ug_unlabeled_data>`.

    A feature cuts the rows at its median into bucket A (at or below) and B
    (above; a categorical feature: its most frequent value against the rest).
    Rows are drawn without replacement so that a share ``R`` of the reference
    comes from A and a share ``1 - R`` of the batch does, until a bucket runs
    out; ``batch_fraction`` of the rows drawn go to the batch. The paper draws
    in mini-batches; this is the same draw in closed form. ``R = 0.5`` gives
    the same distribution in both sets; the further from 0.5, the stronger
    the drift along that feature.

    Parameters
    ----------
    feature : int, str or list of them, default=0
        The feature (column position, or name for a DataFrame) to skew along;
        a list skews along each in turn.
    ratios : sequence of float in [0, 1], default=LINEAR_SKEW_RATIOS
        The sampling ratios ``R``, as shares of bucket A in the reference.
    n_repeats : int, default=1
        Scenarios per (feature, ratio), each with its own random draw.
    batch_fraction : float in (0, 1), default=0.25
        Share of the drawn rows that form the batch (the paper's ``p_pr``).
    random_state : int, RandomState instance or None, default=None
        Seed of the draws.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.meta.drift import LinearSkewSplit
    >>> X = np.arange(1000.0)[:, None]
    >>> cv = LinearSkewSplit(ratios=[0.1, 0.5], random_state=0)
    >>> cv.get_n_splits()
    2
    >>> for ref, batch in cv.split(X):
    ...     print(f"{(X[ref, 0] < 500).mean():.2f} {(X[batch, 0] < 500).mean():.2f}")
    0.10 0.90
    0.50 0.50
    """

    _parameter_constraints = {
        "feature": [Integral, str, list, tuple],
        "ratios": ["array-like"],
        "n_repeats": [Interval(Integral, 1, None, closed="left")],
        "batch_fraction": [_SHARE],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        feature=0,
        *,
        ratios=LINEAR_SKEW_RATIOS,
        n_repeats=1,
        batch_fraction=0.25,
        random_state=None,
    ):
        self.feature = feature
        self.ratios = ratios
        self.n_repeats = n_repeats
        self.batch_fraction = batch_fraction
        self.random_state = random_state

    def _features(self):
        return list(self.feature) if isinstance(self.feature, list | tuple) else [self.feature]

    def _ratios(self):
        r = np.asarray(self.ratios, dtype=np.float64).ravel()
        if r.size == 0 or not np.all((r >= 0) & (r <= 1)):
            raise ValueError(f"ratios must be shares in [0, 1]; got {list(self.ratios)!r}.")
        return r

    def get_n_splits(self, X=None, y=None, groups=None):
        """Number of scenarios: features x ratios x ``n_repeats``."""
        self._validate()
        return len(self._features()) * self._ratios().size * self.n_repeats

    def _split(self, X):
        rng = check_random_state(self.random_state)
        ratios = self._ratios()
        p = self.batch_fraction
        for feature in self._features():
            a, b = _buckets(_column(X, feature), feature)
            for r in ratios:
                # share of bucket A / B used per drawn row: (1-p) r + p (1-r) and its complement
                use_a = (1 - p) * r + p * (1 - r)
                use_b = 1.0 - use_a
                m = min(
                    a.size / use_a if use_a > 0 else np.inf, b.size / use_b if use_b > 0 else np.inf
                )  # rows drawn in all
                n_ref_a = int(round(m * (1 - p) * r))
                n_ref_b = int(round(m * (1 - p) * (1 - r)))
                n_bat_a = min(int(round(m * p * (1 - r))), a.size - n_ref_a)
                n_bat_b = min(int(round(m * p * r)), b.size - n_ref_b)
                for _ in range(self.n_repeats):
                    pa, pb = rng.permutation(a), rng.permutation(b)
                    ref = np.concatenate([pa[:n_ref_a], pb[:n_ref_b]])
                    batch = np.concatenate(
                        [pa[n_ref_a : n_ref_a + n_bat_a], pb[n_ref_b : n_ref_b + n_bat_b]]
                    )
                    yield np.sort(ref), np.sort(batch)


class NearestNeighborsSplit(_Splitter):
    """Nearest-neighbours drift (Elder et al. 2021, Algorithm 2) as a seeded splitter.

    Read more in the :ref:`User Guide <ug_unlabeled_data>`.

    The rows are split at random into a batch (``batch_fraction``) and a
    reference. With probability ``p_set`` the reference is the set to bias
    (otherwise the batch): a random anchor row is drawn from it and the share
    ``p_down`` of that set nearest to the anchor (with probability
    ``p_near``) or furthest from it is removed. The other set loses the same
    share at random, so both keep comparable sizes. Distances are Euclidean
    on the standardized features (NaN counts as the column's median).

    Parameters
    ----------
    n_splits : int, default=10
        Number of scenarios.
    batch_fraction : float in (0, 1), default=0.25
        Share of the rows in the batch before removal (the paper's ``p_pr``).
    p_set : float in [0, 1], default=0.5
        Probability of biasing the reference rather than the batch.
    p_near : float in [0, 1], default=0.5
        Probability of removing the nearest rather than the furthest rows.
    p_down : float or (float, float), default=(0.5, 0.7)
        Share of rows removed; a pair draws it uniformly per scenario.
    random_state : int, RandomState instance or None, default=None
        Seed of the draws.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess.meta.drift import NearestNeighborsSplit
    >>> X = np.random.default_rng(0).normal(size=(1000, 3))
    >>> cv = NearestNeighborsSplit(n_splits=3, random_state=0)
    >>> [(len(ref), len(batch)) for ref, batch in cv.split(X)]  # doctest: +SKIP
    [(338, 112), (239, 80), (302, 100)]
    """

    _parameter_constraints = {
        "n_splits": [Interval(Integral, 1, None, closed="left")],
        "batch_fraction": [_SHARE],
        "p_set": [Interval(Real, 0, 1, closed="both")],
        "p_near": [Interval(Real, 0, 1, closed="both")],
        "p_down": [Interval(Real, 0, 1, closed="left"), tuple, list],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_splits=10,
        *,
        batch_fraction=0.25,
        p_set=0.5,
        p_near=0.5,
        p_down=(0.5, 0.7),
        random_state=None,
    ):
        self.n_splits = n_splits
        self.batch_fraction = batch_fraction
        self.p_set = p_set
        self.p_near = p_near
        self.p_down = p_down
        self.random_state = random_state

    def get_n_splits(self, X=None, y=None, groups=None):
        """Number of scenarios (``n_splits``)."""
        self._validate()
        return self.n_splits

    def _down_range(self):
        lo, hi = (self.p_down, self.p_down) if isinstance(self.p_down, Real) else self.p_down
        if not 0 <= lo <= hi < 1:
            raise ValueError(
                f"p_down must be a share in [0, 1) or a pair lo <= hi; got {self.p_down!r}."
            )
        return lo, hi

    def _split(self, X):
        Z = _numeric_matrix(X)
        med = np.nanmedian(Z, axis=0)
        med = np.where(np.isnan(med), 0.0, med)
        Z = np.where(np.isnan(Z), med, Z)
        sd = Z.std(axis=0)
        Z = (Z - Z.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        lo, hi = self._down_range()
        rng = check_random_state(self.random_state)
        n = Z.shape[0]
        n_batch = max(1, int(round(self.batch_fraction * n)))
        for _ in range(self.n_splits):
            perm = rng.permutation(n)
            batch, ref = perm[:n_batch], perm[n_batch:]
            bias_ref = rng.random_sample() < self.p_set
            down, rand = (ref, batch) if bias_ref else (batch, ref)
            share = rng.uniform(lo, hi)
            anchor = down[rng.randint(down.size)]
            dist = np.linalg.norm(Z[down] - Z[anchor], axis=1)
            order = np.argsort(dist, kind="stable")
            if rng.random_sample() >= self.p_near:
                order = order[::-1]
            n_drop = int(round(share * down.size))
            down = down[order[n_drop:]]
            rand = rng.permutation(rand)[int(round(share * rand.size)) :]
            ref, batch = (down, rand) if bias_ref else (rand, down)
            yield np.sort(ref), np.sort(batch)
