"""A labeling session's labels with their annotators (format 3 of the session file)."""

import copy
import time

import pandas as pd

from ..exceptions import SessionError
from ._store import MAX_ANNOTATOR_CHARS


class AnnotatedSession:
    """Mixin of :class:`LabelingSession`: labels that name their annotator, and repeats.

    A row's first label is told to the assessor as any label; a later label
    of the row by another annotator is a repeat. The assessor's estimate then
    models the annotators' slips (its estimator's ``label_noise``).
    """

    def _tell_annotated(self, row, label, annotator):
        if not isinstance(annotator, str) or not 0 < len(annotator) <= MAX_ANNOTATOR_CHARS:
            raise ValueError(
                f"annotator must be a name of 1 to {MAX_ANNOTATOR_CHARS} characters; "
                f"got {annotator!r}."
            )
        if not hasattr(self.assessor_, "query_repeat"):
            raise ValueError(
                f"annotator: a {type(self.assessor_).__name__} takes every label as the "
                "truth; labels with their annotators need an ActiveAssessor."
            )
        if self._store.format < 3:
            raise SessionError(
                f"{self.path}: a session file of format {self._store.format}, which records "
                f"no annotators; convert it once with `skassess migrate {self.path}` (or "
                "skassess.session.migrate_session(path)) to label with annotators."
            )
        known = (row, annotator) in self._annotated
        when = time.time()
        try:
            self.assessor_.tell([row], [label], annotator=annotator, time=when)
        except ValueError as exc:
            raise ValueError(f"label={label!r} for row {row} was refused: {exc}") from exc
        if known:
            return self  # the same label again from the same annotator: nothing new
        self._commit("label", row, label, when, annotator)
        self._annotated[row, annotator] = label
        return self

    def annotations(self):
        """Every label that names its annotator, repeats included, in order.

        Returns
        -------
        annotations : pandas.DataFrame
            Columns ``row``, ``item_id``, ``annotator`` and ``label`` (as the
            assessor took it); empty where no label names its annotator.
        """
        columns = ["row", "item_id", "annotator", "label"]
        events = self._store.events()
        return pd.DataFrame(
            [[e[k] for k in columns] for e in events if e["annotator"] is not None],
            columns=columns,
        )

    def has_label(self, row, annotator):
        """Whether ``annotator`` labeled ``row`` in this session (None: a label naming none)."""
        return (row, annotator) in self._annotated

    def labels_by(self):
        """The ``(row, annotator)`` pairs labeled in this session (annotator None where
        labels name none)."""
        return set(self._annotated)

    @property
    def annotated(self):
        """Whether the session's labels name their annotators."""
        return any(a is not None for _, a in self._annotated)

    def query_repeat(self, annotator=None):
        """The labeled row whose second label is worth most, for ``annotator``.

        See :meth:`ActiveAssessor.query_repeat
        <skassess.samplers.ActiveAssessor.query_repeat>`.
        """
        return int(self.assessor_.query_repeat(1, annotator=annotator)[0])

    @property
    def n_repeats(self):
        """Labels of rows labeled before by another annotator."""
        return len(self._annotated) - len({row for row, _ in self._annotated})

    def next_item(self, annotator=None, repeat_share=0.0):
        """The row to show next, and whether it is a repeat.

        With ``repeat_share`` above 0, a row labeled before is proposed
        (:meth:`query_repeat`) whenever the session's repeats are fewer than
        ``repeat_share`` of its labels, counting this one; else, or when no
        row is left to repeat for ``annotator``, :meth:`query`'s new row.

        Parameters
        ----------
        annotator : str, default=None
            Who labels it; needed for a repeat.
        repeat_share : float, default=0.0
            The share of the session's labels that are second labels, in
            [0, 1).

        Returns
        -------
        row : int
        repeat : bool
        """
        if not (isinstance(repeat_share, int | float) and 0 <= repeat_share < 1):
            raise ValueError(f"repeat_share must be in [0, 1); got {repeat_share!r}.")
        if repeat_share > 0 and annotator is None:
            raise ValueError("repeat_share above 0 needs the annotator who labels the repeats.")
        wants = self.n_repeats < repeat_share * (self.n_labeled + 1)
        if wants and self.annotated:
            try:
                return self.query_repeat(annotator), True
            except ValueError:  # nothing left to repeat for this annotator
                pass
        return self.query(), False

    def query_batch(self, n):
        """The ``n`` rows the sampler proposes next, best first (the same until a label
        or a skip): several annotators labeling at once each take one."""
        if self._batch is None or self._batch[0] != n:
            k = min(int(n), self.assessor_.n_available_)
            rows = self.assessor_.query(k) if k > 0 else []
            self._batch = (n, [int(r) for r in rows])
        return list(self._batch[1])

    def server_state(self):
        """The labeling server's reservations and key, kept in the session file
        (:class:`~skassess.session.WebState`-like; see ``skassess serve``)."""
        from ._web_state import WebState

        return WebState(self._store.connection)

    def estimate_snapshot(self):
        """The session as it stands, for :meth:`answer` and :meth:`summary` only.

        A shallow copy holding the current estimate: labeling goes on in the
        session (each label makes a new estimate) while the copy's summaries
        are computed, e.g. in another thread. The copy must not label.
        """
        snapshot = copy.copy(self)
        snapshot.assessor_ = copy.copy(self.assessor_)
        return snapshot
