"""A labeling session's loop: labeling until a budget or a stop rule, and its history."""

from numbers import Integral, Real

import numpy as np
import pandas as pd

from ..samplers import StopRule
from ..utils._deprecation import warn_deprecated
from ._progress import progress_bar


class _SessionLoop:
    """What :class:`LabelingSession` does with many labels: :meth:`run` an oracle
    to a budget or a stop rule, and replay its :meth:`history`."""

    def run(
        self,
        oracle,
        budget,
        *,
        stop=None,
        progress=True,
        annotator=None,
        repeat_share=0.0,
        stop_probability=None,
        stop_width=None,
    ):
        """Label until ``budget`` more labels are recorded or a stop rule holds.

        Parameters
        ----------
        oracle : callable or array-like
            ``row -> label`` (None skips the row), or the labels of the pool.
        budget : int
            Labels to add in this call.
        stop : StopRule, default=None
            Read against the assessor's :meth:`~skassess.ActiveAssessor.answer`
            before each label. ``StopRule(probability=p)`` stops when the
            task's answer has probability ``p`` (identification: the top
            candidate's; ``"compare"``: the most probable region's) and, where
            the assessor has them (:meth:`ActiveAssessor.certifies
            <skassess.ActiveAssessor.certifies>`), its anytime-valid intervals
            confirm it at that level: the session then stops on a wrong answer
            with probability at most ``1 - p``. ``StopRule(width=w)`` stops
            when every group's 95 % interval is at most ``w`` wide.
        progress : bool, default=True
            A tqdm line with the labels and the current answer.
        annotator : str, default=None
            The name every label of this call is told with (see :meth:`tell`).
        repeat_share : float, default=0.0
            The share of the session's labels that are second labels of rows
            labeled before, chosen where they are worth most (see
            :meth:`next_item`); needs ``annotator``.
        stop_probability, stop_width : float, default=None
            .. deprecated:: 0.1
               Use ``stop=StopRule(probability=..., width=...)``; removed in
               0.2.

        Returns
        -------
        self : LabelingSession
        """
        if not isinstance(budget, Integral) or isinstance(budget, bool) or budget < 0:
            raise ValueError(f"budget must be a non-negative int; got {budget!r}.")
        stop = self._stop_rule(stop, stop_probability, stop_width, "run")
        if not callable(oracle):
            labels = np.asarray(oracle, dtype=object)
            if labels.shape != (len(self._ids),):
                raise ValueError(
                    f"oracle as an array must hold one label per pool row "
                    f"({len(self._ids)}); got shape {labels.shape}."
                )
            oracle = labels.__getitem__
        rules = stop is not None and stop.active
        with progress_bar(budget, progress) as bar:
            done = 0
            # One answer per label: the stop rules and the progress line share it.
            answer = self.answer() if rules else None
            while done < budget and not (rules and stop(answer)):
                if self.exhausted:
                    break
                row, repeat = self.next_item(annotator, repeat_share)
                label = oracle(row)
                if label is None:
                    if repeat:  # an item labeled before is not skipped: ask no more
                        break
                    self.skip(row)  # the posterior, hence the answer, is unchanged
                    continue
                self.tell(row, label, annotator=annotator)
                done += 1
                bar.update(1)
                if rules or progress:
                    answer = self.answer()
                if progress:
                    bar.set_postfix_str(answer["text"], refresh=False)
        return self

    def should_stop(self, stop=None, *, stop_probability=None, stop_width=None):
        """Whether ``stop`` (a :class:`~skassess.samplers.StopRule`) holds now.

        ``stop_probability`` and ``stop_width`` are deprecated since 0.1 (use
        ``stop=StopRule(...)``).
        """
        stop = self._stop_rule(stop, stop_probability, stop_width, "should_stop")
        if stop is None or not stop.active:
            return False
        return stop(self.answer()) is not None

    @staticmethod
    def _stop_rule(stop, stop_probability, stop_width, method):
        if stop is not None and not isinstance(stop, StopRule):
            raise ValueError(f"stop must be a skassess.samplers.StopRule or None; got {stop!r}.")
        if stop_probability is None and stop_width is None:
            return stop
        for name, value in (("stop_probability", stop_probability), ("stop_width", stop_width)):
            if value is not None and not (isinstance(value, Real) and 0 < value <= 1):
                raise ValueError(f"{name} must be in (0, 1]; got {value!r}.")
        warn_deprecated(
            f"LabelingSession.{method}(stop_probability=..., stop_width=...)",
            f"{method}(stop=StopRule(probability=..., width=...))",
        )
        if stop is not None:
            raise ValueError(
                "Pass stop=StopRule(...) alone, not with stop_probability or stop_width."
            )
        return StopRule(probability=stop_probability, width=stop_width)

    # ---------------------------------------------------------------- results
    def history(self, n_points=50, level=0.95):
        """How the posterior converged: the summary after every few labels of the session.

        The stored labels are replayed in order on a fresh fit of the pool.

        Parameters
        ----------
        n_points : int, default=50
            Label counts at which the posterior is summarized (0 and the last
            included).
        level : float, default=0.95

        Returns
        -------
        history : pandas.DataFrame
            One row per (label count, group): ``n_labels``, ``group``,
            ``mean``, ``lower``, ``upper`` and ``probability`` (the task's
            answer probability at that count, for identification and
            comparison tasks).
        """
        assessor = self._fitted()
        labels = [e for e in self._store.events() if e["kind"] == "label"]
        counts = np.unique(
            np.linspace(0, len(labels), min(n_points, len(labels) + 1)).round().astype(int)
        )
        frames, done = [], 0
        for k in counts:
            if k > done:
                chunk = labels[done:k]
                assessor.replay(
                    pd.DataFrame(
                        {
                            "step": [e["step"] for e in chunk],
                            "index": [e["row"] for e in chunk],
                            "label": pd.Series([e["label"] for e in chunk], dtype=object),
                            "annotator": pd.Series([e["annotator"] for e in chunk], dtype=object),
                        }
                    )
                )
                done = k
            try:
                table = assessor.summary(level).reset_index()
            except ValueError:  # ActiveTester before its first drawn label
                continue
            table = table.rename(columns={table.columns[0]: "group", "estimate": "mean"})
            keep = [c for c in ("group", "mean", "lower", "upper") if c in table]
            table = table[keep]
            table.insert(0, "n_labels", int(k))
            table["probability"] = assessor.answer(level)["probability"]
            frames.append(table)
        return pd.concat(frames, ignore_index=True)


def stop_rule(answer, stop_probability=None, stop_width=None):
    """Which stop rule an answer meets: "probability", "width" or None.

    .. deprecated:: 0.1
       Use :class:`~skassess.samplers.StopRule`; removed in 0.2.
    """
    warn_deprecated(
        "skassess.session.stop_rule(answer, ...)",
        "skassess.samplers.StopRule(probability=..., width=...)(answer)",
    )
    return StopRule(probability=stop_probability, width=stop_width)(answer)
