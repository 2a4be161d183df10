"""Annotators who slip, when each item has several likely true classes: its slots.

A comparison of models sees, on each item, the classes its models predict.
Where they disagree, the true class is far more often one of those classes
than any other, and one annotator's slip toward a class no model predicted
is far more often a slip than the truth. The one-coin model of
:mod:`._annotators` spreads the black box's errors over the other classes
alike, so it reads such a slip as the truth and charges every model with an
error it did not make.

Here each labeled item ``i`` has ``d_i`` *slots*, the distinct classes its
models predict (in the order of its agreement pattern's blocks), and its
group ``g`` (its agreement pattern) has ``phi_g``, a Dirichlet distribution
over its slots and *the rest* (each class no model predicts, alike): the
comparison's own prior of the pattern (its ``prior_``: "block b right" is
slot b, "none right" the rest), or one pseudo-count each. Annotator ``a``
gives the true class with probability ``1 - eps_a`` and each other class
with probability ``eps_a / (K - 1)`` (the one-coin slips); an annotator of
known accuracy keeps it fixed, the others have a Beta prior on
``1 - eps_a``. With one slot and one pseudo-count each the
model is the one-coin model of :mod:`._annotators` (``phi_g = (theta_g,
1 - theta_g)``).

The posterior is drawn by Gibbs sampling: each item's true class given the
slip rates and ``phi`` (exactly, over its slots, the classes its labels name
and the rest), each ``phi_g`` given the true classes (Dirichlet), each free
slip rate given them (Beta); by default, given the true classes of the
items labeled more than once alone, from a chain of those items' own (a cut
posterior: single labels say nothing of the slip rates), and with no such
item, at either end of the range the single labels allow, one chain per
end. Draws of the true labels are taken every ``THIN`` sweeps after
``BURN_IN``; the slip rates of every sweep after it are the annotators'
accuracy.
"""

import numpy as np
from scipy import special

from ._annotators import AnnotatorRates, allowed_ends, end_blocks

__all__ = ["SlotAnnotators", "model_slots"]

#: Gibbs sweeps before the first draw, and between two draws of the true labels.
BURN_IN, THIN = 300, 30
#: Grid points of each group's share of true classes among its slots, integrated
#: when the labels' likelihood of the slip rates is read for their allowed range.
SHARE_GRID = 4000


def model_slots(predictions, blocks):
    """Each item's slots: the class of each block of its agreement pattern, -1 past the last.

    Parameters
    ----------
    predictions : ndarray of shape (n, M)
        Each model's predicted class.
    blocks : ndarray of shape (n, M)
        The agreement pattern (``agreement_patterns(predictions)``).

    Returns
    -------
    slots : ndarray of shape (n, M)
    """
    n, M = predictions.shape
    slots = np.full((n, M), -1, dtype=np.int64)
    for m in range(M - 1, -1, -1):
        slots[np.arange(n), blocks[:, m]] = predictions[:, m]
    return slots


class SlotAnnotators(AnnotatorRates):
    """The posterior of the slip rates and of the true labels, each item's among its slots.

    Parameters
    ----------
    slots : ndarray of shape (n, D)
        Each labeled item's slots (distinct classes), -1 past the last; the
        items of a group have the same number of slots.
    group : ndarray of shape (n,)
        Group of each item (any labels).
    labels : ndarray of shape (n, A)
        Each annotator's class for each item, -1 where none.
    n_classes : int
        ``K``.
    prior : list of A entries
        Per annotator: ``(alpha, beta)`` of the Beta prior of its accuracy, or
        a float, its known accuracy.
    random_state : numpy.random.Generator
    concentration : ndarray of shape (n, D + 1), default=None
        Each item's group's Dirichlet parameters over its slots and the rest
        (0 where a cell cannot be). None: one each where it can.
    slip_evidence : {"bounds", "repeats", "all"}, default="bounds"
        The items whose labels the slip rates are drawn from: those labeled
        more than once (``"repeats"``: with no such item, the slip rates keep
        their prior; ``"bounds"``: with no such item, each is drawn half the
        time at either end of the range the labels allow,
        :meth:`_allowed_ends`), or all.
    """

    def __init__(
        self,
        slots,
        group,
        labels,
        n_classes,
        prior,
        random_state,
        concentration=None,
        slip_evidence="bounds",
    ):
        self.K = int(n_classes)
        self.slots = np.asarray(slots, dtype=np.int64)
        self.labels = np.asarray(labels, dtype=np.int64)
        self.rng = random_state
        self._set_prior(prior)
        if slip_evidence not in ("repeats", "bounds", "all"):
            raise ValueError(
                f"slip_evidence must be 'repeats', 'bounds' or 'all'; got {slip_evidence!r}."
            )
        # The model of the repeated items alone, whose chain gives the slip rates
        # (a cut posterior); None where the slip rates come from every item's.
        self._evidence = None
        self._ends = None
        repeated = (self.labels >= 0).sum(axis=1) >= 2
        if slip_evidence in ("repeats", "bounds") and not repeated.all():
            self._evidence = "prior"
            if repeated.any():
                self._evidence = SlotAnnotators(
                    self.slots[repeated],
                    np.asarray(group)[repeated],
                    self.labels[repeated],
                    n_classes,
                    prior,
                    random_state,
                    None if concentration is None else np.asarray(concentration)[repeated],
                    slip_evidence="all",
                )
        n, D = self.slots.shape
        _, self.group = np.unique(np.asarray(group), return_inverse=True)
        self.group = self.group.ravel()
        self.n_groups = int(self.group.max()) + 1 if n else 0
        self.n_slots = (self.slots >= 0).sum(axis=1)
        d = np.zeros(self.n_groups, dtype=np.int64)
        d[self.group] = self.n_slots
        if np.any(d[self.group] != self.n_slots):
            raise ValueError("The items of a group must have the same number of slots.")
        # Candidates: the slots, then each label's class that no slot and no earlier
        # label of the item names (-1 otherwise); the rest's other classes come last.
        given = self.labels >= 0
        named = self.labels.copy()
        for a in range(named.shape[1]):
            earlier = np.concatenate([self.slots, named[:, :a]], axis=1)
            named[(named[:, a][:, None] == earlier).any(axis=1) | ~given[:, a], a] = -1
        self.candidates = np.concatenate([self.slots, named], axis=1)
        self.n_rest = self.K - self.n_slots  # classes no model predicts
        self.n_unnamed = self.n_rest - (named >= 0).sum(axis=1)
        self.match = (self.candidates[:, :, None] == self.labels[:, None, :]) & given[:, None, :]
        self.given = given.astype(float)
        # A group's Dirichlet covers its slots, and the rest where some class is left.
        self.open = np.arange(D + 1)[None, :] < d[:, None]
        self.open[:, D] = d < self.K
        self.alpha = self.open.astype(float)
        if concentration is not None:
            first = np.unique(self.group, return_index=True)[1]
            self.alpha = np.where(self.open, np.asarray(concentration, float)[first], 0.0)
        self.slot_of = np.r_[np.arange(D), np.full(named.shape[1], D)]
        if slip_evidence == "bounds" and not repeated.any() and self.free.any():
            self._ends = self._allowed_ends()

    def _allowed_ends(self, level=0.95):
        """Per free annotator, the ends of the slip rates the labels allow, ``(low, high)``.

        See :func:`._annotators.allowed_ends`; the likelihood read is that of
        whether each label names one of its item's ``d`` slots. In group
        ``g`` it does with probability ``s_g (1 - eps (K - d) / (K - 1)) +
        (1 - s_g) eps d / (K - 1)``, ``s_g`` (the share of true classes among
        the slots) integrated over a uniform prior; a group whose slots are
        every class says nothing.
        """
        given = self.labels >= 0
        inside = ((self.slots[:, :, None] == self.labels[:, None, :]).any(axis=1)) & given
        G, A = self.n_groups, self.labels.shape[1]
        hits, tries = np.zeros((G, A)), np.zeros((G, A))
        np.add.at(hits, self.group, inside.astype(float))
        np.add.at(tries, self.group, given.astype(float))
        d = np.zeros(G)
        d[self.group] = self.n_slots
        keep = d < self.K
        hits, tries, d = hits[keep], tries[keep], d[keep]
        share = (np.arange(SHARE_GRID) + 0.5) / SHARE_GRID
        K = self.K

        def log_likelihood(eps):
            total = np.zeros(eps.shape[0])
            for k, n, slots in zip(hits, tries, d, strict=True):  # one group at a time
                right = 1.0 - eps * (K - slots) / (K - 1)  # (S, A): its label names a slot
                wrong = eps * slots / (K - 1)
                p = share[:, None, None] * right + (1.0 - share)[:, None, None] * wrong
                p = np.clip(p, 1e-300, 1.0 - 1e-16)
                ll = (k * np.log(p) + (n - k) * np.log1p(-p)).sum(-1)  # (Q, S)
                total += special.logsumexp(ll, axis=0) - np.log(SHARE_GRID)
            return total

        return allowed_ends(log_likelihood, self.prior, self.free, self.fixed_eps, level)

    def _eps_terms(self, eps):
        """Per annotator ``log(eps / (K - 1))`` and ``log(1 - eps) - log(eps / (K - 1))``."""
        tiny = np.finfo(float).tiny
        slip = np.log(np.maximum(eps, tiny) / (self.K - 1))
        return slip, np.log(np.maximum(1.0 - eps, tiny)) - slip

    def _draw_classes(self, eps, phi):
        """One draw of every item's true class, and the Dirichlet cell it falls in."""
        n, D = self.slots.shape
        slip, bonus = self._eps_terms(eps)
        base = self.given @ slip  # every label a slip
        log_phi = np.log(np.maximum(phi, np.finfo(float).tiny))[self.group]  # (n, D + 1)
        with np.errstate(divide="ignore"):
            log_rest = log_phi[:, D] - np.log(np.maximum(self.n_rest, 1))
            # a slot's share, or a rest class's share of the rest
            A = self.labels.shape[1]
            prior = np.concatenate([log_phi[:, :D], np.repeat(log_rest[:, None], A, 1)], 1)
            logw = np.where(self.candidates >= 0, prior + self.match @ bonus, -np.inf)
            unnamed = log_rest + np.log(self.n_unnamed.astype(float))
        logw = np.concatenate([logw, unnamed[:, None]], axis=1) + base[:, None]
        choice = np.argmax(logw + self.rng.gumbel(size=logw.shape), axis=1)
        rows = np.arange(n)
        inside = choice < self.candidates.shape[1]
        y = np.where(inside, self.candidates[rows, np.minimum(choice, logw.shape[1] - 2)], -1)
        if not inside.all():
            y[~inside] = self._unnamed_class(np.flatnonzero(~inside))
        cell = np.where(inside, self.slot_of[np.minimum(choice, self.slot_of.size - 1)], D)
        return y, cell

    def _unnamed_class(self, items):
        """A class uniform among those no candidate of the item names."""
        excluded = self.candidates[items]
        excluded = np.sort(np.where(excluded < 0, self.K + 1, excluded), axis=1)
        v = np.floor(self.rng.random(items.size) * self.n_unnamed[items]).astype(np.int64)
        for col in range(excluded.shape[1]):
            v = v + (v >= excluded[:, col])
        return v

    def _draw_phi(self, cell):
        counts = np.zeros(self.open.shape)
        np.add.at(counts, (self.group, cell), 1.0)
        g = np.where(self.open, self.rng.gamma(np.where(self.open, self.alpha + counts, 1.0)), 0.0)
        return g / g.sum(axis=1, keepdims=True)

    def _draw_eps(self, y):
        eps = self.fixed_eps.copy()
        right = ((self.labels == y[:, None]) & (self.labels >= 0)).sum(axis=0)
        wrong = (self.labels >= 0).sum(axis=0) - right
        for a in np.flatnonzero(self.free):
            alpha, beta = self.prior[a]
            eps[a] = 1.0 - self.rng.beta(alpha + right[a], beta + wrong[a])
        return eps

    def draw(self, n_draws):
        """Draws of the slip rates ``(n_draws, A)`` and the true labels ``(n_draws, n)``.

        Keeps the slip rates of every sweep after the burn-in as ``slip_draws_``
        (equal ``slip_weights_``).
        """
        if self._ends is None:
            eps_draws, y_draws, trace = self._chain(n_draws, self._cut_slip_rates)
        else:  # one chain per combination of the ends, each its share of the draws
            at = np.broadcast_to(self.fixed_eps, (n_draws, self.fixed_eps.size)).copy()
            at[:, self.free] = end_blocks(*self._ends, n_draws)
            starts = np.flatnonzero(np.r_[True, (np.diff(at, axis=0) != 0).any(axis=1)])
            parts = [
                self._chain(stop - start, lambda sweeps, e=at[start]: np.tile(e, (sweeps, 1)))
                for start, stop in zip(starts, np.r_[starts[1:], n_draws], strict=True)
            ]
            eps_draws, y_draws, trace = (np.concatenate(p) for p in zip(*parts, strict=True))
        self.slip_draws_ = trace
        self.slip_weights_ = np.full(trace.shape[0], 1.0 / trace.shape[0])
        return eps_draws, y_draws

    def _chain(self, n_draws, slip_rates):
        """One Gibbs chain: draws of the slip rates and true labels, and the slip rates' trace.

        ``slip_rates(sweeps)`` gives the slip rates of each sweep (a cut
        posterior), or None: they are drawn in the chain.
        """
        eps = np.array(
            [
                1.0 - p[0] / (p[0] + p[1]) if f else e
                for f, p, e in zip(self.free, self.prior, self.fixed_eps, strict=True)
            ]
        )
        phi = self.alpha / self.alpha.sum(axis=1, keepdims=True)
        sweeps = BURN_IN + THIN * n_draws
        eps_trace = np.empty((sweeps - BURN_IN, eps.size))
        cut = slip_rates(sweeps)
        y_draws, eps_draws = [], []
        for s in range(sweeps):
            y, cell = self._draw_classes(eps, phi)
            phi = self._draw_phi(cell)
            eps = self._draw_eps(y) if cut is None else cut[s]
            if s >= BURN_IN:
                eps_trace[s - BURN_IN] = eps
                if (s - BURN_IN) % THIN == THIN - 1:
                    y_draws.append(y)
                    eps_draws.append(eps)
        return np.array(eps_draws), np.array(y_draws), eps_trace

    def _cut_slip_rates(self, sweeps):
        """The slip rates of each sweep under the cut posterior, shape (sweeps, A); None: joint.

        They come from the chain of the repeated items' model, or from the
        prior where no item is repeated.
        """
        if self._evidence is None:
            return None
        if isinstance(self._evidence, SlotAnnotators):
            self._evidence.draw(-(-(sweeps - BURN_IN) // THIN))
            trace = self._evidence.slip_draws_
            return np.concatenate([np.repeat(trace[:1], BURN_IN, axis=0), trace])[:sweeps]
        eps = np.broadcast_to(self.fixed_eps, (sweeps, self.fixed_eps.size)).copy()
        for a in np.flatnonzero(self.free):
            alpha, beta = self.prior[a]
            eps[:, a] = 1.0 - self.rng.beta(alpha, beta, sweeps)
        return eps
