import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from skassess import ActiveAssessor, BayesianAccuracy
from skassess.exceptions import SessionError, SessionLockedError
from skassess.samplers import ActiveModelSelector, ActiveTester, StopRule, VarianceSampling
from skassess.session import LabelingSession
from skassess.session._labeling import task_answer
from skassess.session._session_loop import stop_rule


def _assessor(**kw):
    kw.setdefault("task", "least_accurate")
    kw.setdefault("random_state", 3)
    return ActiveAssessor(**kw)


def _columns(frame):
    return frame[["kind", "row", "label", "step"]].fillna(-1).to_numpy().tolist()


def test_resume_gives_the_same_next_item(tmp_path, data):
    ref = _assessor().fit(data.scores)
    expected = []
    for _ in range(8):
        i = int(ref.query()[0])
        expected.append(i)
        ref.tell([i], [data.target[i]])
    path = tmp_path / "s.sqlite"
    got = []
    for _ in range(8):  # a new process-like open for every label
        with LabelingSession(path, data.scores, assessor=_assessor()) as s:
            assert s.resumed == bool(got)
            i = s.query()
            assert s.query() == i  # the pending item does not change
            got.append(i)
            s.tell(i, data.target[i])
    assert got == expected
    with LabelingSession(path, data.scores) as s:
        assert s.query() == int(ref.query()[0])
        assert s.n_labeled == 8
        np.testing.assert_allclose(
            s.assessor_.estimator_.posterior_.alpha, ref.estimator_.posterior_.alpha
        )
        hist = s.assessor_.history_
        assert hist["index"].tolist() == expected and hist["step"].tolist() == list(range(1, 9))
        assert (
            hist["time"].to_numpy() == s.events()["time"].astype("int64").to_numpy() / 1e9
        ).all() or np.allclose(hist["time"], s.events()["time"].astype("int64") / 1e9)


def test_undo_asks_the_same_item_again_and_skip_is_stored(tmp_path, data):
    path = tmp_path / "s.sqlite"
    with LabelingSession(path, data.scores, assessor=_assessor()) as s:
        a = s.query()
        s.tell(a, data.target[a])
        b = s.query()
        s.skip(b)
        assert b in s.assessor_.skipped_
        c = s.query()
        assert c not in (a, b)
        s.tell(c, data.target[c])
        assert s.undo()["row"] == c
        assert s.query() == c and s.n_labeled == 1
        assert s.undo()["kind"] == "skip"
        assert s.query() == b
    with LabelingSession(path, data.scores) as s:
        assert s.query() == b and s.n_labeled == 1
        assert s.undo()["row"] == a
        assert s.undo() is None
        assert s.n_labeled == 0 and s.assessor_.n_labeled_ == 0


@pytest.mark.parametrize("row", [-1, 10_000, "3", 2.0, True])
def test_a_row_outside_the_pool_is_refused_by_name(tmp_path, data, row):
    with LabelingSession(tmp_path / "s.sqlite", data.scores, assessor=_assessor()) as s:
        for call in (lambda: s.tell(row, 1), lambda: s.skip(row)):
            with pytest.raises(ValueError, match=r"row must be an int pool index, 0\.\.9999; got"):
                call()
        assert s.n_labeled == 0 and len(s.events()) == 0


@pytest.mark.parametrize("label", [99, -2, "x", 1.5])
def test_a_label_outside_the_classes_is_refused_by_name(tmp_path, data, label):
    with LabelingSession(tmp_path / "s.sqlite", data.scores, assessor=_assessor()) as s:
        row = s.query()
        with pytest.raises(ValueError, match=rf"label={label!r} for row {row} was refused: "):
            s.tell(row, label)
        assert s.n_labeled == 0 and len(s.events()) == 0 and s.query() == row


def test_a_labeled_row_cannot_be_skipped(tmp_path, data):
    with LabelingSession(tmp_path / "s.sqlite", data.scores, assessor=_assessor()) as s:
        a = s.query()
        s.tell(a, data.target[a])
        with pytest.raises(ValueError, match=rf"row={a} is labeled; only an unlabeled row can"):
            s.skip(a)
        assert s.n_labeled == 1 and s.events()["kind"].tolist() == ["label"]


def test_changed_pool_or_settings_are_refused(tmp_path, data):
    path = tmp_path / "s.sqlite"
    with LabelingSession(path, data.scores, assessor=_assessor()) as s:
        s.tell(s.query(), 0)
    changed = data.scores.copy()
    changed[5] = changed[5][::-1]
    with pytest.raises(SessionError, match="the pool differs"):
        LabelingSession(path, changed)
    moved = 'assessor.task: stored "least_accurate", given "estimate"'
    with pytest.raises(SessionError, match=moved):
        LabelingSession(path, data.scores, assessor=_assessor(task="estimate"))
    with pytest.raises(SessionError, match="needs an assessor"):
        LabelingSession(tmp_path / "new.sqlite", data.scores)
    with pytest.raises(ValueError, match="random_state to be an int"):
        LabelingSession(
            tmp_path / "new2.sqlite",
            data.scores,
            assessor=_assessor(random_state=np.random.RandomState(0)),
        )
    with pytest.raises(ValueError, match="ids must hold one id per pool row"):
        LabelingSession(tmp_path / "new3.sqlite", data.scores, assessor=_assessor(), ids=[1])
    # the refusals wrote nothing
    with LabelingSession(path, data.scores) as s:
        assert s.n_labeled == 1


def test_not_a_session_file(tmp_path, data):
    bad = tmp_path / "x.sqlite"
    bad.write_text("hello, not a database" * 100)
    with pytest.raises(SessionError, match="not a skassess session file"):
        LabelingSession(bad, data.scores, assessor=_assessor())
    with pytest.raises(SessionError, match="no such session file"):
        LabelingSession.read_events(tmp_path / "missing.sqlite")


@pytest.mark.slow
def test_second_process_is_refused(tmp_path, data):
    path = tmp_path / "s.sqlite"
    with LabelingSession(path, data.scores, assessor=_assessor()) as s:
        s.tell(s.query(), 1)
        code = (
            "import sys\n"
            "from skassess.session import LabelingSession\n"
            "from skassess.datasets import load_fashion_mnist_scores\n"
            "from skassess.exceptions import SessionLockedError\n"
            "try:\n"
            f"    LabelingSession({str(path)!r}, load_fashion_mnist_scores().scores)\n"
            "except SessionLockedError as e:\n"
            "    print(e); sys.exit(3)\n"
        )
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert proc.returncode == 3, proc.stderr
        assert "open in another process" in proc.stdout
        with pytest.raises(SessionLockedError):
            LabelingSession.read_events(path)
        s.tell(s.query(), 2)  # the first process is unharmed
    events, _, _ = LabelingSession.read_events(path)
    assert events["label"].tolist() == [1, 2]


def test_bad_labels_leave_the_file_unchanged(tmp_path, data):
    path = tmp_path / "s.sqlite"
    with LabelingSession(path, data.scores, assessor=_assessor()) as s:
        row = s.query()
        with pytest.raises(ValueError):
            s.tell(row, 17)
        with pytest.raises(ValueError, match="row must be an int"):
            s.tell("3", 1)
        assert s.n_labeled == 0 and s.query() == row
        s.tell(row, 4)
        s.tell(row, 4)  # the same label again: nothing new
        with pytest.raises(ValueError, match="cannot change"):
            s.tell(row, 5)
        assert s.n_labeled == 1


@pytest.mark.slow
def test_run_with_stop_rules(tmp_path, data):
    # Two classes of Fashion-MNIST far apart (0.746 and 0.984): confirmed within the budget.
    pred = data.scores.argmax(axis=1)
    keep = np.isin(pred, [1, 2])
    scores, target = data.scores[keep], data.target[keep]
    assessor = _assessor(estimator=BayesianAccuracy(), strategy="lucb")  # as the command
    with LabelingSession(tmp_path / "a.sqlite", scores, assessor=assessor) as s:
        s.run(target, 2000, stop=StopRule(probability=0.9), progress=False)
        answer = s.assessor_.answer()
        assert answer["probability"] >= 0.9 and answer["certified"] >= 0.9
        assert s.n_labeled < 2000
        assert "least accurate: 2 " in answer["text"]
    est = _assessor(task="estimate")
    with LabelingSession(tmp_path / "b.sqlite", data.scores, assessor=est) as s:
        s.run(data.target, 2000, stop=StopRule(width=0.3), progress=False)
        assert s.assessor_.answer()["max_width"] <= 0.3 < 1
        assert s.should_stop(StopRule(width=0.3)) and not s.should_stop()
        n = s.n_labeled
        assert 0 < n < 2000
    with LabelingSession(tmp_path / "c.sqlite", data.scores, assessor=est) as s:
        s.run(lambda row: None if row % 2 else int(data.target[row]), 20, progress=False)
        ev = s.events()
        assert (ev["kind"] == "label").sum() == 20
        assert (ev.loc[ev["kind"] == "skip", "row"] % 2 == 1).all()
        with pytest.raises(ValueError, match="width must be a number in"):
            s.run(data.target, 5, stop=StopRule(width=2))
        with pytest.raises(ValueError, match="stop must be a skassess.samplers.StopRule"):
            s.run(data.target, 5, stop=0.3)


@pytest.mark.slow
def test_deprecated_stop_arguments_and_functions(tmp_path, data):
    est = _assessor(task="estimate")
    with LabelingSession(tmp_path / "b.sqlite", data.scores, assessor=est) as s:
        with pytest.warns(
            FutureWarning,
            match=r"LabelingSession.run\(stop_probability=..., "
            r"stop_width=...\) is deprecated",
        ):
            s.run(data.target, 2000, stop_width=0.3, progress=False)
        n = s.n_labeled
    with LabelingSession(tmp_path / "c.sqlite", data.scores, assessor=est) as s:
        s.run(data.target, 2000, stop=StopRule(width=0.3), progress=False)
        assert s.n_labeled == n
        with pytest.warns(FutureWarning, match="should_stop"):
            assert s.should_stop(stop_width=0.3)
        with pytest.warns(FutureWarning, match=r"task_answer\(assessor\) is deprecated"):
            old = task_answer(s.assessor_)
        assert old == s.assessor_.answer()
        with pytest.warns(FutureWarning, match=r"stop_rule\(answer, ...\) is deprecated"):
            assert stop_rule(old, stop_width=0.3) == "width"
        with pytest.raises(ValueError, match="stop_width must be in"):
            s.run(data.target, 5, stop_width=2)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="the SIGKILL test forks (POSIX only)")
def test_sigkill_loses_no_label_and_keeps_the_query_sequence(tmp_path, data):
    """Kill a labeling process 50+ times at random moments; resume each time.

    The session's storage is under test, not the estimator: the hierarchical prior's
    fit takes about a tenth of the calibrated one's, so the annotator's pause (which
    spreads the kills over the run) is most of a label's time and the kills land in
    every phase of it (opening and replaying, querying, answering, committing), all
    of them before the last label.
    """
    budget = 300

    def assessor():
        return _assessor(estimator=BayesianAccuracy(prior="hierarchical"))

    def oracle(row):
        time.sleep(0.02)  # an annotator; also spreads the kills over the run
        return None if row % 7 == 0 else int(data.target[row])  # some rows are skipped

    with LabelingSession(tmp_path / "ref.sqlite", data.scores, assessor=assessor()) as s:
        s.run(oracle, budget, progress=False)
        reference = _columns(s.events())

    path = tmp_path / "killed.sqlite"
    rng = np.random.default_rng(0)
    kills, committed, finished = 0, 0, False
    before_the_end = 0  # kills of a child that had labels left to make
    while not finished:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 1
            try:
                with LabelingSession(path, data.scores, assessor=assessor()) as s:
                    s.run(oracle, budget - s.n_labeled, progress=False)
                code = 0
            finally:
                os._exit(code)
        if kills < 50:
            time.sleep(rng.uniform(0.0, 0.15))
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            kills += 1
        else:
            assert os.WEXITSTATUS(status) == 0
            finished = kills >= 50
        try:
            events, _, _ = LabelingSession.read_events(path)
        except SessionError as exc:
            # killed before or while it created the file: nothing was committed, and the
            # next run starts the session anew (the loop goes on and checks it does)
            assert os.WIFSIGNALED(status) and committed == 0, exc
            assert "no such session file" in str(exc) or "holds no session" in str(exc), exc
            events = pd.DataFrame(columns=["kind", "row", "label", "step"])
        labels = events[events["kind"] == "label"]
        assert len(labels) >= committed  # nothing committed is ever lost
        assert not events["row"].duplicated().any()  # nor duplicated
        assert _columns(events) == reference[: len(events)]
        if os.WIFSIGNALED(status) and len(labels) < budget:
            before_the_end += 1
        committed = len(labels)
    # the kills' pauses sum to about 3.8 s, under 190 of the annotator's pauses: every
    # kill lands before the budget is labeled, however fast the machine
    assert kills >= 50 and before_the_end == kills and committed == budget
    assert _columns(LabelingSession.read_events(path)[0]) == reference


def _partial_file(path, stage):
    """A session file as a run killed while creating it leaves it."""
    import sqlite3

    from skassess.session._store import _SCHEMA

    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")  # the header is on disk: the file is not empty
    if stage == "tables":
        db.executescript(_SCHEMA)
    db.commit()
    db.close()


@pytest.mark.parametrize("stage", ["header", "tables"])
def test_a_file_whose_creation_was_cut_short_starts_anew(tmp_path, data, stage):
    path = tmp_path / "cut.sqlite"
    _partial_file(path, stage)
    with pytest.raises(SessionError, match="holds no session|not a skassess session"):
        LabelingSession.read_events(path)  # nothing to read ...
    with LabelingSession(path, data.scores, assessor=_assessor()) as s:  # ... nor to lose
        assert not s.resumed
        s.tell(s.query(), 0)
    assert LabelingSession.read_events(path)[0]["kind"].tolist() == ["label"]


def test_a_kill_while_a_session_is_created_leaves_a_file_the_same_call_opens(tmp_path, data):
    """Kill the creating process at random moments of its start, 30 times.

    Every file left is opened by the same call that made it: anew when its settings
    were not yet committed, resumed with no label when they were. The delays span one
    start timed here; whatever the machine's load, each kill lands somewhere in a
    start or after it, and every such moment must leave a file that opens.
    """
    X = data.scores[:300]
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    with LabelingSession(tmp_path / "timed.sqlite", X, assessor=_assessor()):
        took = time.perf_counter() - start  # a start here, to spread the kills over one
    outcomes = {"new": 0, "resumed": 0}
    for attempt in range(30):
        path = tmp_path / f"c{attempt}.sqlite"
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            code = 1
            try:
                with LabelingSession(path, X, assessor=_assessor()):
                    code = 0
            finally:
                os._exit(code)
        time.sleep(rng.uniform(0.0, 1.5 * took))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        with LabelingSession(path, X, assessor=_assessor()) as s:
            assert s.n_labeled == 0
            outcomes["resumed" if s.resumed else "new"] += 1
            s.tell(s.query(), 1)
        assert LabelingSession.read_events(path)[0]["kind"].tolist() == ["label"]
    assert sum(outcomes.values()) == 30


def test_a_variance_sampling_session_resumes_the_same_draws(tmp_path, data):
    """The randomized design's draws come from the stored generator: a session reopened
    after every label asks what an uninterrupted assessor asks, and holds its posterior."""

    def assessor():
        return ActiveAssessor(
            BayesianAccuracy(), strategy=VarianceSampling(min_labels=2), random_state=5
        )

    X, y = data.scores[:1500], data.target[:1500]
    ref = assessor().fit(X)
    expected = []
    for _ in range(6):
        i = int(ref.query()[0])
        expected.append(i)
        ref.tell([i], [y[i]])
    path = tmp_path / "v.sqlite"
    got = []
    for _ in range(6):
        with LabelingSession(path, X, assessor=assessor()) as s:
            i = s.query()
            got.append(i)
            s.tell(i, y[i])
    assert got == expected
    with LabelingSession(path, X) as s:  # the strategy object rebuilt from the file
        assert s.assessor_.strategy_.min_labels == 2 and s.query() == int(ref.query()[0])
        # the labels after the burn-in carry their draws' design weights, replayed
        np.testing.assert_allclose(
            s.assessor_.estimator_.overall_interval(), ref.estimator_.overall_interval()
        )


def _two_models(n=600, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    preds = [np.where(rng.uniform(size=n) < a, y, 1 - y) for a in (0.9, 0.8)]
    return np.stack([np.where(p[:, None] == np.arange(2), 0.8, 0.2) for p in preds], axis=1), y


@pytest.mark.parametrize("kind", ["tester", "selector"])
def test_a_session_with_the_other_samplers_resumes_as_if_uninterrupted(tmp_path, data, kind):
    if kind == "tester":
        X, y = data.scores[:800], data.target[:800]
        # no surrogate refits (min_labels above the labels): the replay is what is tested
        make = lambda: ActiveTester(  # noqa: E731
            metrics=("accuracy",), min_labels=10_000, random_state=0
        )
    else:
        X, y = _two_models()
        make = lambda: ActiveModelSelector(random_state=0)  # noqa: E731
    ref = make().fit(X)
    for _ in range(25):
        row = ref.query(1)
        ref.tell(row, y[row])
    path = tmp_path / f"{kind}.sqlite"
    with LabelingSession(path, X, assessor=make()) as s:
        s.run(y, 10, progress=False)
        s.tell(s.query(), y[s.query()])
        s.undo()  # the last label goes, and its row is asked again
    with LabelingSession(path, X) as s:  # the stored sampler, rebuilt from data
        assert type(s.assessor_) is type(ref) and s.n_labeled == 10
        s.run(y, 15, progress=False)
        rows, _ = s.labeled_rows()
        assert rows.tolist() == ref.history_["index"].tolist()
        pd.testing.assert_frame_equal(s.summary(), ref.summary())
        hist = s.history(n_points=3)
        assert {"n_labels", "group", "mean", "lower", "upper"} <= set(hist.columns)
        assert hist["n_labels"].max() == 25


def test_a_tester_session_refuses_to_skip_and_takes_no_groups(tmp_path, data):
    X = data.scores[:300]
    with LabelingSession(tmp_path / "t.sqlite", X, assessor=ActiveTester(random_state=0)) as s:
        with pytest.raises(ValueError, match="ActiveTester cannot skip rows"):
            s.skip(s.query())
        assert s.events().empty  # nothing recorded
    with pytest.raises(ValueError, match="ActiveTester takes no group_by"):
        LabelingSession(
            tmp_path / "g.sqlite", X, group_by=np.zeros(300), assessor=ActiveTester(random_state=0)
        )
    assert not (tmp_path / "g.sqlite").exists()
    with pytest.raises(ValueError, match="assessor must be an ActiveSampler"):
        LabelingSession(tmp_path / "h.sqlite", X, assessor=BayesianAccuracy())


def test_a_session_names_its_predicted_classes_by_its_classes(data, tmp_path):
    """A session given class names answers and summarizes with them, not class numbers."""
    names = [f"class {k}" for k in range(10)]
    assessor = ActiveAssessor(task="least_accurate", random_state=0)
    scores, truth = data.scores[:2000], data.target[:2000]
    with LabelingSession(tmp_path / "s.sqlite", scores, assessor=assessor, classes=names) as s:
        for _ in range(10):
            row = s.query()
            s.tell(row, names[truth[row]])
        assert s.answer()["text"].startswith("least accurate: class ")
        assert list(s.summary().index) == names


def test_design_groups_are_the_groups_a_group_strategy_draws_within(tmp_path, data):
    X = data.scores[:1500]
    with LabelingSession(tmp_path / "g.sqlite", X, assessor=_assessor()) as s:
        np.testing.assert_array_equal(s.design_groups(), X.argmax(axis=1))
    group = np.repeat(["a", "b", "c"], 500)
    by_column = _assessor(estimator=BayesianAccuracy(grouping="external"))
    with LabelingSession(tmp_path / "c.sqlite", X, group_by=group, assessor=by_column) as s:
        np.testing.assert_array_equal(s.design_groups(), np.repeat([0, 1, 2], 500))
    # unequal chances within a group: no groups make the labels random samples
    variance = ActiveAssessor(BayesianAccuracy(), strategy=VarianceSampling(), random_state=0)
    with LabelingSession(tmp_path / "v.sqlite", X, assessor=variance) as s:
        assert s.design_groups() is None
    with LabelingSession(tmp_path / "t.sqlite", X, assessor=ActiveTester(random_state=0)) as s:
        assert s.design_groups() is None
