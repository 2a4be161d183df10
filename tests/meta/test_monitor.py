import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

from skassess.exceptions import SkassessWarning
from skassess.meta import PerformanceMonitor, PerformancePredictor
from skassess.meta._chunk_posterior import GRID_CELLS

from ..helpers import beta_scores


@pytest.fixture(scope="module")
def stream():
    rng = np.random.default_rng(0)
    S_ref = beta_scores(rng, 2000, 0)
    y_ref = (rng.random(2000) > S_ref[:, 0]).astype(int)
    S = np.vstack([beta_scores(rng, 1000, 0), beta_scores(rng, 1000, 3)])
    y = (rng.random(2000) > S[:, 0]).astype(int)  # calibrated: accuracy = mean top confidence
    monitor = PerformanceMonitor(
        threshold=0.7, chunk_size=500, level=(0.5, 0.95, 0.99), random_state=0, progress=False
    ).fit(S_ref, y_ref)
    return monitor, S, y


def test_one_row_a_chunk_with_every_level(stream):
    monitor, S, _ = stream
    table = monitor.predict(S)
    assert list(table.index) == [0, 1, 2, 3] and table.index.name == "chunk"
    assert list(table["n_rows"]) == [500] * 4 and list(table["n_labeled"]) == [0] * 4
    for s in ("50", "95", "99"):
        assert np.all(table[f"predicted_lower_{s}"] <= table["predicted"])
        # no label: the posterior is the label-free prediction (on cells of 1 / GRID_CELLS)
        np.testing.assert_allclose(
            table[f"lower_{s}"], table[f"predicted_lower_{s}"], atol=1 / GRID_CELLS
        )
    assert np.all(table["lower_99"] <= table["lower_95"])
    assert np.all(table["lower_95"] <= table["lower_50"])
    # the drifted chunks: lower predicted accuracy, more drift, more probably below 0.7
    assert table["predicted"].iloc[3] < table["predicted"].iloc[0] - 0.1
    assert table["drift_scores"].iloc[3] > table["drift_scores"].iloc[0] + 0.2
    assert table["p_below"].iloc[3] > table["p_below"].iloc[0]
    assert table["alert"].dtype == bool
    assert table["drift_features"].isna().all()  # scores only: no features to drift


def test_the_same_as_the_interval_regressor_on_each_chunk(stream):
    monitor, S, _ = stream
    table = monitor.predict(S)
    one = monitor.interval_regressor_.predict(S[500:1000], level=[0.5, 0.95])
    assert table.loc[1, "predicted"] == pytest.approx(one["accuracy"].iloc[0])
    assert table.loc[1, "predicted_lower_95"] == pytest.approx(one["lower"].iloc[1])
    assert table.loc[1, "lower_95"] == pytest.approx(one["lower"].iloc[1], abs=1 / GRID_CELLS)


def test_chunks_by_key_are_sorted_and_may_interleave(stream):
    monitor, S, _ = stream
    days = pd.Series(pd.to_datetime(["2026-01-02", "2026-01-01"]).repeat(1000)).dt.to_period("D")
    rows = np.r_[np.arange(1000, 2000), np.arange(1000)]  # day 2: drifted rows first
    table = monitor.predict(S[rows], chunk_by=days)
    assert [str(k) for k in table.index] == ["2026-01-01", "2026-01-02"]
    whole = monitor.predict(S[:1000], chunk_by=np.zeros(1000))
    assert table["predicted"].iloc[0] == pytest.approx(whole["predicted"].iloc[0])
    shuffled = np.random.default_rng(1).permutation(2000)
    again = monitor.predict(S[rows][shuffled], chunk_by=days.iloc[shuffled])
    np.testing.assert_allclose(again["predicted"], table["predicted"])


@pytest.mark.slow
def test_labels_update_their_chunk_only(stream):
    monitor, S, y = stream
    labels = np.full(2000, -1)
    labels[1500:1530] = y[1500:1530]  # 30 labels of the last chunk
    table = monitor.predict(S, labels)
    free = monitor.predict(S)
    assert list(table["n_labeled"]) == [0, 0, 0, 30]
    pd.testing.assert_series_equal(table["mean"].iloc[:3], free["mean"].iloc[:3])
    assert "prior_weight" not in table
    w_free = free["upper_95"].iloc[3] - free["lower_95"].iloc[3]
    assert table["upper_95"].iloc[3] - table["lower_95"].iloc[3] < w_free
    # every row labeled: the posterior is the observed accuracy, exactly
    y_pred = S.argmax(axis=1)
    full = monitor.predict(S, y)
    observed = [np.mean(y_pred[i : i + 500] == y[i : i + 500]) for i in range(0, 2000, 500)]
    np.testing.assert_allclose(full["mean"], observed, atol=1e-9)
    assert np.all(full["upper_95"] - full["lower_95"] <= 1 / 500)  # within its one cell


def test_late_labels_for_an_old_chunk(stream):
    monitor, S, y = stream
    labels = np.full(2000, -1)
    labels[1500:1520] = y[1500:1520]
    before = monitor.predict(S, labels)
    labels[:20] = y[:20]  # labels for the first chunk arrive later
    after = monitor.predict(S, labels)
    assert after["n_labeled"].iloc[0] == 20 and before["n_labeled"].iloc[0] == 0
    assert after["mean"].iloc[3] == before["mean"].iloc[3]


@pytest.mark.slow
def test_labeled_chunks_cover_at_least_their_level():
    # Chunks without drift, 40 labels on top of the label-free prior: the posterior's 90 %
    # interval holds the chunk's accuracy in at least 84 % of 100 runs (3 SE below 90 %). It
    # is conservative here (the prior's spread allows for drift that these chunks lack).
    rng = np.random.default_rng(3)
    S_ref = beta_scores(rng, 2000, 0)
    monitor = PerformanceMonitor(level=0.9, random_state=0, progress=False).fit(
        S_ref, (rng.random(2000) > S_ref[:, 0]).astype(int)
    )
    hits = []
    for _ in range(100):
        S = beta_scores(rng, 400, 0)
        y = (rng.random(400) > S[:, 0]).astype(int)
        labels = np.full(400, -1)
        labels[:40] = y[:40]
        row = monitor.predict(S, labels).iloc[0]
        acc = np.mean(S.argmax(1) == y)
        hits.append(row["lower_90"] <= acc <= row["upper_90"])
    assert np.mean(hits) >= 0.84


@pytest.mark.slow
def test_label_free_bands_of_the_scores_alone_are_calibrated_without_drift():
    # 100 chunks of 400 rows drawn as the reference was; the monitor sees the scores alone.
    # The 80 % band holds each chunk's accuracy in 68-92 % of them (3 SE either side: a band
    # that always holds, as one scaled for a predictor with features did, fails), and the
    # 95 % band is at most twice the chunk's own sampling error (1.96 sqrt(a (1 - a) / n)).
    rng = np.random.default_rng(5)
    S_ref = beta_scores(rng, 2000, 0)
    monitor = PerformanceMonitor(
        level=(0.8, 0.95), chunk_size=400, random_state=0, progress=False
    ).fit(S_ref, (rng.random(2000) > S_ref[:, 0]).astype(int))
    S = beta_scores(rng, 40_000, 0)
    y = (rng.random(40_000) > S[:, 0]).astype(int)
    table = monitor.predict(S)
    acc = (S.argmax(axis=1) == y).reshape(100, 400).mean(axis=1)
    inside = (table["lower_80"] <= acc) & (acc <= table["upper_80"])
    assert 0.68 <= inside.mean() <= 0.92
    half = (table["upper_95"] - table["lower_95"]) / 2
    sampling = 1.96 * np.sqrt(acc * (1 - acc) / 400)
    assert np.median(half / sampling) <= 2.0


@pytest.mark.slow
def test_query_spends_labels_where_the_alert_is_uncertain(stream):
    monitor, S, y = stream
    picked = monitor.query(S, n=40)
    assert picked.size == 40 and np.unique(picked).size == 40
    by_chunk = np.bincount(picked // 500, minlength=4)
    table = monitor.predict(S)
    closest = int(np.argmin(np.abs(table["predicted"] - 0.7)))
    assert by_chunk[closest] == by_chunk.max()
    assert np.array_equal(picked, monitor.query(S, n=40, table=table))  # seeded
    labels = np.full(2000, -1)
    labels[picked] = y[picked]
    more = monitor.query(S, labels, n=2000)
    assert np.intersect1d(more, picked).size == 0 and more.size == 2000 - 40


def test_query_without_threshold_widest_first(stream):
    monitor, S, _ = stream
    monitor.set_params(threshold=None)
    try:
        table = monitor.predict(S)
        assert "alert" not in table and "p_below" not in table
        picked = monitor.query(S, n=10)
        widest = int(np.argmax(table["upper_99"] - table["lower_99"]))
        assert np.bincount(picked // 500, minlength=4)[widest] >= 3
    finally:
        monitor.set_params(threshold=0.7)


def test_bad_input(stream):
    monitor, S, _ = stream
    with pytest.raises(NotFittedError):
        PerformanceMonitor().predict(S)
    with pytest.raises(ValueError, match="chunk_by has 3 values for 2000 rows"):
        monitor.predict(S, chunk_by=[1, 2, 3])
    keys = np.zeros(2000, dtype=object)
    keys[7] = None
    with pytest.raises(ValueError, match="chunk_by has no key at row 7"):
        monitor.predict(S, chunk_by=keys)
    with pytest.raises(ValueError, match="n must be a positive integer; got 0"):
        monitor.query(S, n=0)
    with pytest.raises(ValueError, match="table is not the predict"):
        monitor.query(S, n=1, table=monitor.predict(S[:1000]))
    with pytest.raises(ValueError, match="X and scores are both None"):
        monitor.predict(None)
    with pytest.raises(ValueError, match="'threshold' parameter"):
        PerformanceMonitor(threshold=1.5).fit(S[:100], np.zeros(100, dtype=int))
    with pytest.raises(ValueError, match="level must be a number in"):
        PerformanceMonitor(level=(0.9, 1.0)).fit(S[:100], np.zeros(100, dtype=int))


@pytest.mark.slow
def test_a_black_box_with_features():
    from sklearn.datasets import make_classification
    from sklearn.linear_model import LogisticRegression

    X, y = make_classification(3000, 6, random_state=0)
    model = LogisticRegression().fit(X[:1000], y[:1000])
    monitor = PerformanceMonitor(
        PerformancePredictor(model, method="confidence"), chunk_size=500, progress=False
    ).fit(X[1000:2000], y[1000:2000])
    table = monitor.predict(X[2000:])
    assert len(table) == 2 and table["drift_features"].notna().all()
    ppv = monitor.set_params(metric="ppv").fit(X[1000:2000], y[1000:2000])
    mine = model.predict(X[1000:2000]) == 1
    assert ppv.reference_accuracy_ == pytest.approx(np.mean(y[1000:2000][mine] == 1))
    assert ppv.predict(X[2000:])["n_predicted"].sum() == int((model.predict(X[2000:]) == 1).sum())


def test_the_timeline(stream):
    import matplotlib

    matplotlib.use("Agg")
    from skassess.meta import MonitorDisplay

    monitor, S, y = stream
    labels = np.full(2000, -1)
    labels[1500:1530] = y[1500:1530]
    days = np.repeat(pd.period_range("2026-03-01", periods=4, freq="D"), 500)
    disp = MonitorDisplay.from_monitor(monitor, S, labels, chunk_by=days, name="daily")
    assert disp.ax_.get_title() == "daily"
    assert len(disp.line_.get_xdata()) == 4
    legend = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert "threshold" in legend and "with labels (99 %)" in legend
    assert {"label-free 99 % interval", "label-free 50 % interval"} <= set(legend)
    named = MonitorDisplay(monitor.predict(S, chunk_by=np.repeat(list("abcd"), 500))).plot()
    assert [t.get_text() for t in named.ax_.get_xticklabels()] == list("abcd")


@pytest.fixture(scope="module")
def rated():
    rng = np.random.default_rng(5)
    S_ref = beta_scores(rng, 3000, 2)  # column 0 ~ Beta(6, 4): both classes predicted
    y_ref = (rng.random(3000) > S_ref[:, 0]).astype(int)
    S = np.vstack([beta_scores(rng, 800, 2), beta_scores(rng, 800, 4)])
    y = (rng.random(1600) > S[:, 0]).astype(int)
    return S_ref, y_ref, S, y


@pytest.mark.slow
@pytest.mark.parametrize("metric, cls", [("ppv", 1), ("npv", 0)])
def test_a_rate_is_the_accuracy_of_the_rows_of_its_prediction(rated, metric, cls):
    S_ref, y_ref, S, y = rated
    kw = {"chunk_size": 800, "level": (0.8, 0.95), "threshold": 0.5, "random_state": 0}
    rate = PerformanceMonitor(metric=metric, progress=False, **kw).fit(S_ref, y_ref)
    on_ref = S_ref.argmax(axis=1) == cls
    plain = PerformanceMonitor(progress=False, **kw).fit(S_ref[on_ref], y_ref[on_ref])
    assert rate.reference_accuracy_ == pytest.approx(np.mean(y_ref[on_ref] == cls))
    table = rate.predict(S)
    mine = S.argmax(axis=1) == cls
    assert table["n_rows"].tolist() == [800, 800]
    assert table["n_predicted"].tolist() == [int(mine[:800].sum()), int(mine[800:].sum())]
    for i, part in enumerate((slice(0, 800), slice(800, 1600))):
        one = plain.predict(S[part][mine[part]])
        for col in ("predicted", "lower_80", "upper_95", "p_below"):
            assert table[col].iloc[i] == pytest.approx(one[col].iloc[0])
    # the labels of the other prediction's rows do not enter the rate, and are never asked for
    labels = np.where(mine, -1, y)
    pd.testing.assert_frame_equal(rate.predict(S, labels), table)
    picked = rate.query(S, n=50)
    assert mine[picked].all() and picked.size == 50
    labels[picked] = y[picked]
    assert rate.predict(S, labels)["n_labeled"].sum() == 50


def test_a_rate_needs_a_binary_black_box_and_rows_of_its_prediction(rated):
    S_ref, y_ref, S, _ = rated
    three = np.random.default_rng(0).dirichlet(np.ones(3), 300)
    with pytest.raises(ValueError, match="'ppv' is a rate of a binary black box; its scores"):
        PerformanceMonitor(metric="ppv").fit(three, three.argmax(axis=1))
    S_few = np.column_stack([np.r_[np.full(290, 0.9), np.full(10, 0.2)], np.zeros(300)])
    S_few[:, 1] = 1 - S_few[:, 0]
    with pytest.raises(ValueError, match="rows predicted 1; there are 10, and it needs 20"):
        PerformanceMonitor(metric="ppv").fit(S_few, (S_few[:, 1] > 0.5).astype(int))
    monitor = PerformanceMonitor(metric="ppv", threshold=0.6, chunk_size=100, progress=False)
    monitor.fit(S_ref, y_ref)
    negatives = np.column_stack([np.full(100, 0.8), np.full(100, 0.2)])
    with pytest.warns(SkassessWarning, match=r"fewer than 30 rows of the metric: 0 \(\d+ rows\)"):
        table = monitor.predict(np.vstack([S[:100], negatives]))
    assert table["n_predicted"].iloc[1] == 0 and np.isnan(table["predicted"].iloc[1])
    assert table["alert"].tolist() == [table["alert"].iloc[0], False]
    assert table["alert"].dtype == bool


def test_label_free_once_then_any_labels_and_levels(stream):
    monitor, S, y = stream
    free = monitor.predict_label_free(S)
    labels = np.full(2000, -1)
    labels[1500:1540] = y[1500:1540]
    pd.testing.assert_frame_equal(
        monitor.predict_from(free, monitor.label_codes(labels, 2000)), monitor.predict(S, labels)
    )
    wider = monitor.predict_from(free, level=0.997)
    assert {"lower_99.7", "upper_99.7"} <= set(wider.columns) and "lower_95" not in wider
    with pytest.raises(ValueError, match="one class index per stream row"):
        monitor.predict_from(free, np.zeros(3, dtype=int))


def test_a_chunk_of_few_rows_is_predicted_with_a_warning(stream):
    monitor, S, _ = stream
    days = np.r_[np.zeros(1000, dtype=int), 1]
    with pytest.warns(
        SkassessWarning, match=r"1 chunk\(s\) hold fewer than 30 rows.*: 1 \(1 rows\)"
    ):
        table = monitor.predict(S[:1001], chunk_by=days)
    assert list(table["n_rows"]) == [1000, 1]  # still predicted


def test_progress_false_shows_no_bar_of_any_part(monkeypatch):
    import tqdm.auto

    made = []
    real = tqdm.auto.tqdm

    def recording(*args, **kwargs):
        made.append(kwargs.get("disable", False))
        return real(*args, **kwargs)

    monkeypatch.setattr(tqdm.auto, "tqdm", recording)
    rng = np.random.default_rng(0)
    S, y = beta_scores(rng, 3000, 0), None
    y = (rng.random(3000) > S[:, 0]).astype(int)
    monitor = PerformanceMonitor(chunk_size=500, progress=False, random_state=0)
    monitor.fit(S[:2000], y[:2000]).predict(S[2000:])
    assert made and all(made)  # every bar made was disabled


def test_a_chunk_in_any_row_order_gives_the_same_answer(stream):
    monitor, S, y = stream
    labels = np.full(2000, -1)
    labels[1500:1520] = y[1500:1520]
    table = monitor.predict(S, labels)
    order = np.concatenate([np.random.default_rng(k).permutation(500) + 500 * k for k in range(4)])
    shuffled = monitor.predict(S[order], labels[order])
    pd.testing.assert_frame_equal(shuffled, table)


@pytest.mark.parametrize("kind", ["dates", "names"])
def test_the_timeline_labels_of_many_chunks_do_not_overlap(kind):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from skassess.meta import MonitorDisplay

    n = 60
    index = (
        pd.period_range("2026-01-01", periods=n, freq="D")
        if kind == "dates"
        else pd.Index([f"batch-2026-01-{k:03d}" for k in range(n)])
    )
    table = pd.DataFrame(
        {
            "n_labeled": 0,
            "predicted": 0.8,
            "predicted_lower_80": 0.75,
            "predicted_upper_80": 0.85,
            "mean": 0.8,
            "lower_80": 0.75,
            "upper_80": 0.85,
        },
        index=pd.Index(index, name="chunk"),
    )
    fig, ax = plt.subplots(figsize=(8, 4))
    MonitorDisplay(table).plot(ax=ax)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = [t for t in ax.get_xticklabels() if t.get_text()]
    assert 2 <= len(labels) <= 12
    for a, b in zip(labels, labels[1:], strict=False):
        box_a, box_b = a.get_window_extent(renderer), b.get_window_extent(renderer)
        angle = np.deg2rad(a.get_rotation())
        if angle == 0:
            assert not box_a.overlaps(box_b)
        else:  # parallel slanted strips: apart when their spacing across them beats the height
            height = a.get_fontsize() * fig.dpi / 72
            assert (box_b.x1 - box_a.x1) * np.sin(angle) >= height
    plt.close(fig)


def test_chunks_one_at_a_time_give_the_predict_table(stream):
    monitor, S, y = stream
    labels = np.full(2000, -1)
    labels[1500:1530] = y[1500:1530]
    table = monitor.predict(S, labels)
    one_by_one = monitor.predict_chunks(
        (k, S[500 * k : 500 * (k + 1)], labels[500 * k : 500 * (k + 1)]) for k in range(4)
    )
    pd.testing.assert_frame_equal(one_by_one, table)
    with pytest.raises(ValueError, match="chunks is empty"):
        monitor.predict_chunks([])
