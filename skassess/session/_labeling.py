"""LabelingSession: an ActiveAssessor whose every label is on disk before the next query."""

import hashlib
import secrets
from numbers import Integral, Real
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import clone

from ..exceptions import SessionError
from ..samplers import ActiveAssessor
from ..utils import as_scalar
from ._columns import ItemIds
from ._spec import SpecError, encode_estimator, estimator_from_spec, same_spec
from ._store import SessionStore

__all__ = ["LabelingSession", "pool_fingerprint", "stop_rule", "task_answer"]


def pool_fingerprint(*parts):
    """SHA-256 of the pool a session labels: its scores, labels, groups, predictions, ids."""
    digest = hashlib.sha256()
    for part in parts:
        if part is None:
            digest.update(b"\x00none")
            continue
        if isinstance(part, ItemIds):  # the same bytes as an array of its strings
            digest.update(f"\x00({len(part)},)".encode())
            for block in part.joined():
                digest.update(block)
            continue
        arr = np.asarray(part)
        digest.update(f"\x00{arr.shape}".encode())
        if arr.dtype == object or arr.dtype.kind in "USO":
            digest.update("\x1f".join(map(str, arr.ravel().tolist())).encode())
        else:
            digest.update(str(arr.dtype).encode())
            # the array's own buffer: no copy of a large pool
            digest.update(np.ascontiguousarray(arr).reshape(-1).view(np.uint8))
    return digest.hexdigest()


def _params_json(assessor):
    return {k: repr(v) for k, v in sorted(assessor.get_params(deep=False).items())}


def task_answer(assessor, level=0.95, group_names=None):
    """The current answer to the assessor's task, for a progress line and a stop rule.

    ``group_names`` (a sequence indexed by group position, e.g. class names)
    names the groups in the text.

    Returns
    -------
    answer : dict
        ``text`` (one line), ``probability`` (of the top candidate, the
        most probable comparison region; None for ``"estimate"``),
        ``certified`` (:meth:`~skassess.ActiveAssessor.certified_level` of
        that answer, for the tasks and strategies that have it; else None)
        and ``max_width`` (the widest per-group ``level`` interval).
    """
    est = assessor.estimator_
    groups = list(assessor.groups_)

    def name(group):
        if group_names is None:
            return str(as_scalar(group))
        return str(group_names[groups.index(group)])

    summary = est.summary(level)
    widths = (summary["upper"] - summary["lower"]).to_numpy()
    out = {"max_width": float(np.nanmax(widths)) if len(widths) else float("nan"),
           "probability": None, "certified": None}
    certifiable = assessor.certifies()
    if assessor.task == "compare":
        p = assessor.comparison_probabilities()
        a, b = (name(g) for g in assessor._setup.arm_labels[list(assessor._setup.task.pair)])
        names = (f"{a} < {b}", "practically equal", f"{a} > {b}")
        k = int(np.argmax(p))
        out["probability"] = p[k]
        if certifiable:
            out["certified"] = assessor.certified_level(("lower", "equal", "higher")[k])
        out["text"] = (f"{names[k]} (P = {p[k]:.3f}{_certified_text(out)}; "
                       f"rope ±{assessor.rope:g})")
    elif assessor.task == "estimate":
        lo, hi = est.overall_interval(level)
        out["text"] = (f"overall {est.overall_mean():.4f} [{lo:.4f}, {hi:.4f}]; widest group "
                       f"interval {out['max_width']:.3f}")
    else:
        p = assessor.identification_probabilities()
        out["probability"] = float(p.max())
        if certifiable:
            out["certified"] = assessor.certified_level(p.idxmax())
        words = assessor.task.replace("_", " ")
        out["text"] = f"{words}: {name(p.idxmax())} (P = {p.max():.3f}{_certified_text(out)})"
    return out


def _certified_text(answer):
    c = answer["certified"]
    return "" if c is None else f"; anytime-valid at {c:.2f}"


class LabelingSession:
    """An active-labeling session stored in a file, resumable after a crash.

    The session wraps an :class:`~skassess.ActiveAssessor` fitted on the
    pool. Each :meth:`tell` (or :meth:`skip`) is committed to the session
    file, an SQLite database in WAL mode, in its own transaction before the
    call returns; the file keeps the assessor's class and parameters, the
    pool's fingerprint and every label with its time and the query
    generator's state after it, all as plain data (JSON), with a checksum
    chain that is verified on every open.
    Opening an existing file with the same pool resumes the session: the
    next :meth:`query` gives the item an uninterrupted session would have
    given. The ``skassess label`` command writes the same files.

    Parameters
    ----------
    path : str or path-like
        The session file, created if it does not exist.
    X : array-like of shape (n_pool, n_classes) or (n_pool,)
        Black-box scores of every pool item.
    y : array-like of shape (n_pool,), default=None
        Labels known before the session (``-1`` elsewhere); not stored.
    assessor : ActiveAssessor, default=None
        Starts a new session (unfitted; its ``random_state`` must be an int
        or None, which draws one and stores it). On resuming, None rebuilds
        the stored assessor; a given one must have the same parameters. An
        assessor holding a class of your own (e.g. a custom strategy) is
        stored by its name only, never as code: pass it again to resume.
    group_by, y_pred : array-like, default=None
        As in :meth:`ActiveAssessor.fit`.
    ids : array-like of shape (n_pool,), default=None
        Item ids stored beside the labels; None: the row numbers.
    group_names : sequence, default=None
        Names of the assessor's groups in progress lines (e.g. class names
        for groups by predicted class); not stored.
    info : dict, default=None
        JSON-serializable facts stored with a new session (e.g. the input
        file and its checksum); read back as :attr:`info`.

    Attributes
    ----------
    assessor_ : ActiveAssessor
        The fitted assessor holding the posterior.
    path : pathlib.Path
        The session file.
    info : dict
    resumed : bool
        Whether the file held a session already.

    Raises
    ------
    SessionError
        If the pool differs from the one the session started on, a given
        assessor's parameters differ from the stored ones, the file is not a
        session file or is damaged (the message says how), or it is a
        format-1 file, which held a pickle (see :func:`migrate_session`).
    SessionLockedError
        If another process has the session open.

    Notes
    -----
    A session file holds data only: opening one never runs code from it, so
    a file received from someone else is safe to open.

    Examples
    --------
    >>> import numpy as np
    >>> from skassess import ActiveAssessor
    >>> from skassess.datasets import load_fashion_mnist_scores
    >>> from skassess.session import LabelingSession
    >>> data = load_fashion_mnist_scores()
    >>> path = getfixture("tmp_path") / "session.sqlite"
    >>> assessor = ActiveAssessor(task="least_accurate", random_state=0)
    >>> with LabelingSession(path, data.scores, assessor=assessor) as session:
    ...     first = session.query()
    ...     session = session.tell(first, data.target[first])
    ...     second = session.query()        # shown, then the process dies
    >>> with LabelingSession(path, data.scores) as session:   # resume
    ...     session.n_labeled, session.query() == second
    (1, True)
    """

    def __init__(self, path, X, y=None, *, assessor=None, group_by=None, y_pred=None,
                 ids=None, info=None, group_names=None):
        try:  # the pool's size; the scores themselves are checked once, by the assessor
            n = len(X)
        except TypeError as exc:
            raise TypeError(f"X: the black box's scores must be an array of shape (n_pool, "
                            f"n_classes) or (n_pool,); got {type(X).__name__}.") from exc
        self.group_names = group_names
        if ids is not None and len(ids) != n:
            raise ValueError(f"ids must hold one id per pool row ({n}); got {len(ids)}.")
        self._pool = (X, y, group_by, y_pred)
        if ids is None:
            ids = np.arange(n).astype(str)
        self._ids = ids if isinstance(ids, ItemIds) else np.asarray(ids).astype(str)
        fingerprint = pool_fingerprint(X, y, group_by, y_pred, self._ids)
        self.path = Path(path)
        self._store = SessionStore(path)
        try:
            if self._store.is_new:
                self.resumed = False
                template = self._new_template(assessor)
                self._store.create(
                    settings=_params_json(template), data_sha256=fingerprint,
                    assessor=encode_estimator(template), info=info or {},
                )
            else:
                self.resumed = True
                template = self._stored_assessor(path, assessor)
                stored = self._store.get("data_sha256")
                if stored != fingerprint:
                    raise SessionError(
                        f"{path}: the pool differs from the one this session was started on "
                        f"(fingerprint {fingerprint[:12]}..., stored {stored[:12]}...); "
                        "resume with the same scores, labels, groups and ids."
                    )
            self.info = self._store.get("info", {})
            self._template = template
            self._rebuild()
        except BaseException:
            # A session that cannot start leaves no file behind (nor one it must be told
            # to ignore); an existing file is only closed.
            self._store.discard()
            raise

    def _stored_assessor(self, path, assessor):
        """The stored assessor, rebuilt from its data (or the given one, if the same)."""
        spec = self._store.get("assessor")
        if assessor is None:
            try:
                return estimator_from_spec(spec)
            except SpecError as exc:
                raise SessionError(f"{path}: {exc}") from exc
        try:
            given = encode_estimator(assessor)
        except SpecError as exc:
            raise SessionError(f"{path}: {exc}") from exc
        if not same_spec(given, spec):
            kept, now = self._store.get("settings"), _params_json(assessor)
            diff = sorted(k for k in set(kept) | set(now) if now.get(k) != kept.get(k))
            if not diff:  # the same repr, other data (e.g. a nested estimator's arrays)
                diff = ["assessor"]
            raise SessionError(
                f"{path}: the session was started with "
                + ", ".join(f"{k}={kept.get(k)}" for k in diff)
                + "; given " + ", ".join(f"{k}={now.get(k)}" for k in diff)
                + ". Start a new session file to change them."
            )
        return clone(assessor)

    @staticmethod
    def _new_template(assessor):
        if assessor is None:
            raise SessionError("A new session needs an assessor (an unfitted ActiveAssessor).")
        if not isinstance(assessor, ActiveAssessor):
            raise ValueError(f"assessor must be an ActiveAssessor; got {type(assessor).__name__}.")
        template = clone(assessor)
        seed = template.random_state
        if seed is None:
            # The seed is stored: the session resumes the same query sequence.
            template.set_params(random_state=secrets.randbelow(2**31 - 1))
        elif not isinstance(seed, Integral):
            raise ValueError(
                "A labeling session needs assessor.random_state to be an int or None, so that a "
                f"resumed session repeats the query sequence; got {type(seed).__name__}."
            )
        try:
            encode_estimator(template)
        except SpecError as exc:
            raise ValueError(f"A labeling session stores its assessor as data: {exc}") from exc
        return template

    def _rebuild(self):
        """Fit the assessor on the pool and replay the stored events (resume, undo)."""
        X, y, group_by, y_pred = self._pool
        assessor = clone(self._template).fit(X, y, group_by=group_by, y_pred=y_pred)
        events = self._store.events()
        labels = [e for e in events if e["kind"] == "label"]
        if events:
            try:
                assessor._restore(
                    [e["row"] for e in labels], [e["label"] for e in labels],
                    [e["step"] for e in labels], [e["time"] for e in labels],
                    [e["row"] for e in events if e["kind"] == "skip"], events[-1]["cursor"],
                )
            except (ValueError, TypeError, KeyError) as exc:
                raise SessionError(
                    f"{self.path}: the stored events do not fit the pool and assessor they "
                    f"were recorded with ({exc})."
                ) from exc
        self.assessor_ = assessor
        self._pending = None

    # --------------------------------------------------------------- labeling
    def query(self):
        """The pool row to label next (the same row until it is labeled or skipped)."""
        if self._pending is None:
            self._pending = int(self.assessor_.query(1)[0])
        return self._pending

    def item_id(self, row):
        """The id of pool row ``row``."""
        return str(self._ids[row])

    def tell(self, row, label):
        """Record the label of one pool row, committed to the file before returning."""
        row = self._row(row)
        label = as_scalar(label)
        before = self.assessor_.n_labeled_
        self.assessor_.tell([row], [label])  # validates first; raises leaving all as it was
        if self.assessor_.n_labeled_ == before:
            return self  # the same label again: nothing new
        self._commit("label", row, label)
        return self

    def skip(self, row):
        """Never ask for ``row`` again, without a label; committed to the file."""
        row = self._row(row)
        if row in set(self.assessor_.skipped_.tolist()):
            return self
        self.assessor_.skip([row])
        self._commit("skip", row, None)
        return self

    def undo(self):
        """Delete the last label or skip; the next :meth:`query` asks for its row again.

        Returns the undone event (a dict) or None if there was none.
        """
        last = self._store.pop()
        if last is not None:
            self._rebuild()
        return last

    def _row(self, row):
        if not isinstance(row, Integral | np.integer) or isinstance(row, bool):
            raise ValueError(f"row must be an int pool index; got {row!r}.")
        return int(row)

    def _commit(self, kind, row, label):
        step = self.assessor_._n_steps
        try:
            when = self._store.add(kind, row, self._ids[row], label, step,
                                   self.assessor_._cursor())
        except BaseException:
            # Not on disk, so not recorded: go back to what the file holds.
            self._rebuild()
            raise
        if kind == "label":
            # The stored time is the history's time (a resumed history equals it).
            entry = self.assessor_._history[-1]
            self.assessor_._history[-1] = entry[:-1] + (when,)
        self._pending = None

    def run(self, oracle, budget, *, stop_probability=None, stop_width=None, progress=True):
        """Label until ``budget`` more labels are recorded or a stop rule holds.

        Parameters
        ----------
        oracle : callable or array-like
            ``row -> label`` (None skips the row), or the labels of the pool.
        budget : int
            Labels to add in this call.
        stop_probability : float, default=None
            Stop when the task's answer has this probability (identification:
            the top candidate's; ``"compare"``: the most probable region's)
            and, where the assessor has them (:meth:`ActiveAssessor.certifies
            <skassess.ActiveAssessor.certifies>`), its anytime-valid intervals
            confirm it at this level: the session then stops on a wrong answer
            with probability at most ``1 - stop_probability`` (see
            :func:`stop_rule`).
        stop_width : float, default=None
            Stop when every group's 95 % interval is at most this wide.
        progress : bool, default=True
            A tqdm line with the labels and the current answer.

        Returns
        -------
        self : LabelingSession
        """
        if not isinstance(budget, Integral) or budget < 0:
            raise ValueError(f"budget must be a non-negative int; got {budget!r}.")
        for name, value in (("stop_probability", stop_probability), ("stop_width", stop_width)):
            if value is not None and not (isinstance(value, Real) and 0 < value <= 1):
                raise ValueError(f"{name} must be in (0, 1]; got {value!r}.")
        if not callable(oracle):
            labels = np.asarray(oracle, dtype=object)
            if labels.shape != (len(self._ids),):
                raise ValueError(f"oracle as an array must hold one label per pool row "
                                 f"({len(self._ids)}); got shape {labels.shape}.")
            oracle = labels.__getitem__
        rules = stop_probability is not None or stop_width is not None
        with _progress_bar(budget, progress) as bar:
            done = 0
            # One answer per label: the stop rules and the progress line share it.
            answer = task_answer(self.assessor_, group_names=self.group_names) if rules \
                else None
            while done < budget and not stop_rule(answer, stop_probability, stop_width):
                if self.exhausted:
                    break
                row = self.query()
                label = oracle(row)
                if label is None:
                    self.skip(row)  # the posterior, hence the answer, is unchanged
                    continue
                self.tell(row, label)
                done += 1
                bar.update(1)
                if rules or progress:
                    answer = task_answer(self.assessor_, group_names=self.group_names)
                if progress:
                    bar.set_postfix_str(answer["text"], refresh=False)
        return self

    def should_stop(self, stop_probability=None, stop_width=None):
        """Whether a stop rule of :meth:`run` holds now."""
        if stop_probability is None and stop_width is None:
            return False
        return stop_rule(task_answer(self.assessor_), stop_probability, stop_width) is not None

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
        X, y, group_by, y_pred = self._pool
        assessor = clone(self._template).fit(X, y, group_by=group_by, y_pred=y_pred)
        labels = [e for e in self._store.events() if e["kind"] == "label"]
        counts = np.unique(np.linspace(0, len(labels), min(n_points, len(labels) + 1))
                           .round().astype(int))
        frames, done = [], 0
        for k in counts:
            if k > done:
                chunk = labels[done:k]
                assessor.tell([e["row"] for e in chunk], [e["label"] for e in chunk])
                done = k
            table = assessor.summary(level).reset_index()
            table = table.rename(columns={table.columns[0]: "group"})
            keep = [c for c in ("group", "mean", "lower", "upper") if c in table]
            table = table[keep]
            table.insert(0, "n_labels", int(k))
            table["probability"] = task_answer(assessor, level)["probability"]
            frames.append(table)
        return pd.concat(frames, ignore_index=True)

    def labeled_rows(self):
        """``(rows, labels)`` recorded in this session, as the assessor took them."""
        labels = [e for e in self._store.events() if e["kind"] == "label"]
        return (np.array([e["row"] for e in labels], dtype=np.int64),
                np.array([e["label"] for e in labels], dtype=object))

    @property
    def n_labeled(self):
        """Labels recorded in this session (labels known before it are not counted)."""
        return self._store.count("label")

    @property
    def exhausted(self):
        """Whether no item is left that the task may ask for."""
        return self.assessor_._available_rows() == 0

    def events(self):
        """Every label and skip, in order, as a DataFrame."""
        return _events_frame(self._store.events())

    def summary(self, level=0.95):
        """The posterior summary of :attr:`assessor_`."""
        return self.assessor_.summary(level)

    def close(self):
        """Release the session file."""
        self._store.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    @staticmethod
    def read_events(path):
        """The events of a session file, without the pool (labels as CSV need nothing else)."""
        store = SessionStore(path, create=False)
        try:
            return _events_frame(store.events()), store.get("info", {}), store.get("settings")
        finally:
            store.close()


def stop_rule(answer, stop_probability=None, stop_width=None):
    """Which stop rule a :func:`task_answer` meets: "probability", "width" or None.

    The probability rule needs the answer's posterior probability at least
    ``stop_probability`` and, where the answer has an anytime-valid level
    (``answer["certified"]``), that level too: a run that stops then is
    wrong with probability at most ``1 - stop_probability``, however its
    stop was timed. A posterior probability alone, read after every label,
    does not keep that promise (docs/benchmarks.md, "Stopping on a
    probability").
    """
    if answer is None:
        return None
    p, certified = answer["probability"], answer.get("certified")
    if stop_probability is not None and p is not None and p >= stop_probability and (
            certified is None or certified >= stop_probability):
        return "probability"
    if stop_width is not None and answer["max_width"] <= stop_width:
        return "width"
    return None


class _NoBar:
    def update(self, n):
        pass

    def set_postfix_str(self, text, refresh=True):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _progress_bar(total, progress):
    # Without a bar, no tqdm at all: tqdm takes a process-shared lock, which a
    # process killed while holding it would leave locked for forked siblings.
    if not progress:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="labels")


def _events_frame(events):
    columns = ["seq", "kind", "row", "item_id", "label", "step", "time"]
    frame = pd.DataFrame([{k: e[k] for k in columns} for e in events], columns=columns)
    frame["time"] = pd.to_datetime(frame["time"], unit="s", utc=True)
    return frame
