"""An assessor's labels with their annotators: repeats, and the estimate under their slips.

``tell(..., annotator=NAME)`` records who gave each label. A row's first label
is told as any label is (the queries' state, :attr:`history_`); a later label
of the row from another annotator is a repeat. After each such ``tell`` the
estimate is the estimator's mixture over draws of the true labels under the
one-coin model of the annotators (the estimators' ``label_noise``), fitted
from the pool counted once and every annotated label.
"""

import copy

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from ._assessor_steps import take_rows
from ._sampler import ActiveSampler


class AnnotatedLabels:
    """Mixin of :class:`ActiveAssessor`: ``tell`` with ``annotator``."""

    def _tell_annotated(self, indices, labels, annotator, time):
        """Record labels with their annotators, then refit the estimate under their slips."""
        check_is_fitted(self)
        rows = self._check_indices(indices)
        given, codes = self._checked_labels(rows, labels, self._n_classes)
        names = self._annotator_names(annotator, len(rows))
        self._check_can_annotate()
        known = dict(((r, a), c) for r, a, c in getattr(self, "_annotations", []))
        new = []
        for r, a, c in zip(rows.tolist(), names, codes.tolist(), strict=True):
            if (r, a) in known:
                if known[r, a] != c:
                    raise ValueError(
                        f"annotator {a!r} gave pool row {r} the label "
                        f"{self._label_name(known[r, a])!r} already; got "
                        f"{self._label_name(c)!r}. An annotator labels a row once."
                    )
                continue
            known[r, a] = c
            new.append((r, a, c))
        if not new:
            return self
        # A row's first label: told as any label is (queries, history, counts).
        first = {}
        for r, _, c in new:
            if self.labels_[r] < 0 and r not in first:
                first[r] = c
        estimate = self._annotated_estimate(getattr(self, "_annotations", []) + new)
        if first:
            idx = np.fromiter(first, dtype=np.intp)
            pick = [int(np.flatnonzero(rows == r)[0]) for r in idx]
            when = None if time is None else np.broadcast_to(np.asarray(time), rows.shape)[pick]
            # The first labels update the queries' state on a plain copy of the pool's
            # fit (the mixture takes no label as the truth); the estimate follows.
            before = self.estimator_
            self.estimator_ = copy.deepcopy(self._unlabeled_pool)
            try:
                self._tell_labels(idx, given[pick], when)
            except BaseException:
                self.estimator_ = before
                raise
        self._annotations = getattr(self, "_annotations", []) + new
        self.estimator_ = estimate
        self._setup.refresh(self.estimator_)
        return self

    def replay(self, history, *, skipped=(), cursor=None):
        history = pd.DataFrame(history)
        if "annotator" not in history.columns or history["annotator"].isna().all():
            return super().replay(history, skipped=skipped, cursor=cursor)
        check_is_fitted(self)
        missing = [c for c in ("index", "label") if c not in history.columns]
        if missing:
            raise ValueError(
                f"history must have the columns 'index' and 'label'; it lacks {missing}."
            )
        super().replay(history.iloc[:0], cursor=cursor)  # checks the cursor
        rows = history["index"].to_numpy().astype(np.intp)
        times = history["time"].tolist() if "time" in history.columns else None
        start = len(self._history)
        first = history[self.labels_[rows] < 0].drop_duplicates("index")
        # One refit from every annotated label: the estimate depends on the labels and
        # their annotators alone, and the queries' counts on each row's first label.
        self._tell_annotated(rows, history["label"].tolist(), history["annotator"], times)
        if "step" in history.columns:
            self._history[start:] = [
                (int(step), *entry[1:])
                for step, entry in zip(first["step"], self._history[start:], strict=True)
            ]
        return super().replay(history.iloc[:0], skipped=skipped, cursor=cursor)

    replay.__doc__ = ActiveSampler.replay.__doc__

    def undo(self):
        if getattr(self, "_annotations", None):
            raise ValueError(
                "undo is not available once labels name their annotators: the repeats "
                "are not in history_."
            )
        return super().undo()

    undo.__doc__ = ActiveSampler.undo.__doc__

    def query_repeat(self, n=1, *, annotator=None):
        """Labeled rows to ask another annotator about: where a second label is worth most.

        A repeat settles a row where the black box and an annotator disagree
        (an error of the black box, or a slip) and tells of the slip rates.
        Rows are ranked by the estimator's ``repeat_utilities()`` (the
        posterior doubt on whether the black box is right on the row), largest
        first; the ranking is deterministic, so a resumed session asks for the
        same rows.

        Parameters
        ----------
        n : int, default=1
            Rows to propose.
        annotator : str, default=None
            Who will label them: rows this annotator labeled already are left
            out. None: any annotator other than those in :attr:`annotations_`
            for the row.

        Returns
        -------
        rows : ndarray of shape (n,)
            Pool rows, most useful first.

        Raises
        ------
        ValueError
            If no label names its annotator yet, or fewer than ``n`` rows are
            left to repeat (for ``annotator``).

        Examples
        --------
        >>> import numpy as np
        >>> from skassess import ActiveAssessor
        >>> rng = np.random.default_rng(0)
        >>> X = rng.dirichlet(np.ones(3), 300)
        >>> sampler = ActiveAssessor(random_state=0).fit(X)
        >>> rows = sampler.query(20)
        >>> _ = sampler.tell(rows, X[rows].argmax(1), annotator="ann")
        >>> again = sampler.query_repeat(2, annotator="bob")
        >>> bool(np.isin(again, rows).all())
        True
        """
        check_is_fitted(self)
        if not isinstance(n, int | np.integer) or isinstance(n, bool) or n < 1:
            raise ValueError(f"n must be a positive int; got {n!r}.")
        if annotator is not None and not isinstance(annotator, str):
            raise ValueError(f"annotator must be a name (str) or None; got {annotator!r}.")
        entries = getattr(self, "_annotations", [])
        if not entries:
            raise ValueError(
                "query_repeat proposes rows labeled already; no label names its annotator "
                "yet (tell(..., annotator=...))."
            )
        done = {r for r, a, _ in entries if a == annotator}
        ranked = self.estimator_.repeat_utilities().index.to_numpy()
        left = ranked[~np.isin(ranked, list(done))] if done else ranked
        if left.size < n:
            who = "any annotator" if annotator is None else f"annotator {annotator!r}"
            raise ValueError(
                f"n={n} repeats asked for, but {left.size} labeled rows are left for {who}."
            )
        return left[:n].astype(np.intp)

    @property
    def annotations_(self):
        """Every label told with an annotator: pool row, annotator and label, in order."""
        check_is_fitted(self)
        entries = getattr(self, "_annotations", [])
        return pd.DataFrame(
            [(r, a, self._label_name(c)) for r, a, c in entries],
            columns=["index", "annotator", "label"],
        )

    def _annotator_names(self, annotator, n):
        if isinstance(annotator, str):
            return [annotator] * n
        names = pd.Series(np.asarray(annotator, dtype=object).ravel())
        if names.size != n:
            raise ValueError(f"annotator must be a name or one name per index; got {names.size}.")
        if names.isna().any():
            raise ValueError(f"annotator[{int(np.flatnonzero(names.isna())[0])}] is missing.")
        return names.astype(str).tolist()

    def _check_can_annotate(self):
        if self._pool is not None:
            raise ValueError(
                "tell(annotator=...) needs the pool in memory; this assessor's pool is in "
                "partitions."
            )
        if self.prior_update_ is not None:
            raise ValueError("tell(annotator=...) does not combine with prior_update.")
        if self._base_estimator.get_params().get("label_noise") == "none":
            raise ValueError(
                "tell(annotator=...) models the annotators' slips; the estimator has "
                "label_noise='none', which takes every label as the truth."
            )
        if not hasattr(self.estimator_, "add_annotations"):
            raise ValueError(
                f"tell(annotator=...) needs an estimator with label_noise; "
                f"{type(self.estimator_).__name__} has none."
            )
        if not getattr(self, "_annotations", None) and (self.labels_ >= 0).any():
            raise ValueError(
                "This assessor holds labels told without annotators; name the annotator of "
                "every label (tell(..., annotator=...) from the first label on) or of none."
            )

    def _annotated_estimate(self, entries):
        """The estimator's mixture from every annotated label (a new object)."""
        if getattr(self, "_unlabeled_pool", None) is None:
            base = clone(self._base_estimator).set_params(label_noise="none")
            self._unlabeled_pool = base.fit(
                self._X, None, group_by=self._group_by, y_pred=self._y_pred
            )
        names = list(dict.fromkeys(a for _, a, _ in entries))
        rows = np.array(sorted({r for r, _, _ in entries}), dtype=np.intp)
        wide = np.full((rows.size, len(names)), -1, dtype=np.int64)
        position = {r: i for i, r in enumerate(rows.tolist())}
        column = {a: j for j, a in enumerate(names)}
        for r, a, c in entries:
            wide[position[r], column[a]] = c
        labels = pd.DataFrame({a: self._decoded(wide[:, j]) for j, a in enumerate(names)})
        estimate = copy.deepcopy(self._unlabeled_pool)
        estimate.set_params(label_noise=self._base_estimator.get_params()["label_noise"])
        return estimate.add_annotations(
            take_rows(self._X, rows),
            labels,
            rows=rows,
            group_by=take_rows(self._group_by, rows),
            y_pred=take_rows(self._y_pred, rows),
        )
