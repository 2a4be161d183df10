"""The posterior assessment of a scores file, read in batches (``skassess assess``)."""

import json
import time
from dataclasses import dataclass, field
from numbers import Real

import numpy as np
import pandas as pd

from ..metrics import (
    BayesianAccuracy,
    BayesianCalibrationError,
    BayesianMisclassificationCost,
    GroupComparison,
)
from ._annotated_assessment import AnnotatedRows
from ._progress import Steps
from ._scores_file import CHUNK_ROWS, ScoresFile
from ._unlabeled import RowSample, check_meta, predict_unlabeled

__all__ = ["FileAssessment", "assess_file"]


@dataclass
class FileAssessment:
    """What ``skassess assess`` prints, writes as JSON and puts in the report.

    Read more in the :ref:`User Guide <ug_command_line>`.

    Attributes
    ----------
    source : dict
        The file, its SHA-256, rows, labeled rows, column roles.
    settings : dict
        Prior, level, ROPE, bins, seed.
    overall : pandas.DataFrame
        One row per metric (accuracy, ECE, cost): mean, lower, upper.
    by_class : pandas.DataFrame
        Accuracy per predicted class.
    by_group : dict of str to pandas.DataFrame
        Accuracy per value of each group column.
    differences : dict of str to pandas.DataFrame
        Per grouping (``"predicted class"`` and each group column): each
        group minus the group with the highest posterior mean accuracy, with
        P(delta > 0) and the ROPE probabilities.
    reliability : pandas.DataFrame or None
        The Bayesian reliability diagram's bins; None where the labels cannot
        give them (``calibration_note`` says why).
    unlabeled : pandas.DataFrame or None
        With ``meta``: each method's predicted accuracy of the unlabeled rows
        (see :func:`assess_file`).
    annotators, agreement : pandas.DataFrame or None
        With ``annotations``: each annotator's labels and estimated accuracy
        (``annotator_summary``), and the agreement on items labeled twice
        (``annotator_agreement``: Cohen's kappa per pair, Fleiss' overall).
    estimators : dict
        The fitted estimators (``"by_class"``, ``"ece"``, ``"group:<col>"``,
        ``"cost"``).
    """

    source: dict
    settings: dict
    overall: pd.DataFrame
    by_class: pd.DataFrame
    by_group: dict
    differences: dict
    reliability: pd.DataFrame
    estimators: dict = field(repr=False, default_factory=dict)
    history: pd.DataFrame | None = None
    session: dict | None = None
    unlabeled: pd.DataFrame | None = None
    calibration_note: str | None = None
    annotators: pd.DataFrame | None = None
    agreement: pd.DataFrame | None = None

    def without_calibration(self, note):
        """This assessment without its ECE and reliability bins, ``note`` saying why."""
        self.overall = self.overall.drop(index="ECE", errors="ignore")
        self.reliability = None
        self.estimators.pop("ece", None)
        self.calibration_note = note
        return self

    def to_dict(self):
        """Plain JSON-ready dict (tables as lists of records)."""

        def records(frame):
            return json.loads(frame.reset_index().to_json(orient="records"))

        return {
            "source": self.source,
            "settings": self.settings,
            "overall": records(self.overall),
            "by_class": records(self.by_class),
            "by_group": {k: records(v) for k, v in self.by_group.items()},
            "differences": {k: records(v) for k, v in self.differences.items()},
            "reliability": None if self.reliability is None else records(self.reliability),
            "calibration_note": self.calibration_note,
            "history": None if self.history is None else records(self.history),
            "session": self.session,
            "unlabeled": None if self.unlabeled is None else records(self.unlabeled),
            "annotators": None if self.annotators is None else records(self.annotators),
            "agreement": None if self.agreement is None else records(self.agreement),
        }


#: A difference's decision (the group minus the best group) in words.
DECISION_WORDS = {"left": "worse", "rope": "equivalent", "right": "better"}


def _differences(estimator, names, rope, level, seed, decision_probability):
    summary = estimator.summary(level)
    if len(summary) < 2:
        return pd.DataFrame()
    best = summary["mean"].idxmax()
    # One set of draws for every comparison (not one per group: K groups x K draws)
    draws = estimator.groupwise_samples(random_state=seed)
    position = {g: i for i, g in enumerate(estimator.groups_)}
    rows = []
    for g in summary.index:
        if g == best:
            continue
        comp = GroupComparison(
            draws[:, position[g]] - draws[:, position[best]],
            g,
            best,
            float(rope),
            float(decision_probability),
        )
        lower, upper = comp.interval(level)
        p_left, p_rope, p_right = comp.probabilities
        rows.append(
            {
                "group": names(g),
                "versus": names(best),
                "mean": comp.mean,
                "lower": lower,
                "upper": upper,
                "p_greater": float(np.mean(comp.samples > 0)),
                "p_left": p_left,
                "p_rope": p_rope,
                "p_right": p_right,
                "decision": DECISION_WORDS.get(comp.decision, comp.decision),
            }
        )
    return pd.DataFrame(rows).set_index("group")


def assessors(group_columns, prior, n_bins, cost_matrix, seed, design=False):
    """The unfitted estimators of an assessment, by key (``"by_class"``, ``"ece"``, ...);
    with ``design``, the ECE's bins are split by the design's groups."""
    est = {
        "by_class": BayesianAccuracy(prior=prior, random_state=seed),
        "ece": BayesianCalibrationError(
            n_bins=n_bins,
            grouping="external" if design else "score_bins",
            prior="informative" if prior in ("hierarchical", "calibrated") else prior,
            random_state=seed,
        ),
    }
    for g in group_columns:
        est[f"group:{g}"] = BayesianAccuracy(grouping="external", prior=prior, random_state=seed)
    if cost_matrix is not None:
        est["cost"] = BayesianMisclassificationCost(
            cost_matrix=np.asarray(cost_matrix), prior=prior, random_state=seed
        )
    return est


def assess_file(
    path,
    *,
    scores_file=None,
    prior="calibrated",
    level=0.95,
    rope=0.05,
    decision_probability=0.95,
    n_bins=10,
    cost_matrix=None,
    random_state=0,
    chunk_rows=CHUNK_ROWS,
    checksum=True,
    extra_labels=None,
    design_groups=None,
    meta=None,
    meta_rows=100_000,
    annotations=None,
    annotator_prior=None,
    progress=False,
    **columns,
):
    """Assess the black box of a scores file from its labeled and unlabeled rows.

    The file is read in batches of ``chunk_rows`` rows and each batch is a
    conjugate update (``partial_fit``) of the estimators, so the memory does
    not grow with the file.

    Parameters
    ----------
    path : str or path-like
        A scores file (see :class:`ScoresFile`; ``columns`` are its keyword
        arguments).
    scores_file : ScoresFile, default=None
        An opened file instead of ``path`` and ``columns``.
    prior : {"calibrated", "hierarchical", "informative", "uniform"}, \
            default="calibrated"
        The prior of the accuracy (per predicted class, per group).
        ``"calibrated"`` takes the scores through a calibration map whose
        trust is learned from the labels (user guide, *The calibrated
        prior*): its overall and per-group intervals held their level on
        pools it was not tuned on, and its overall interval is as narrow as
        prediction-powered inference's; the cost estimator takes it too. The
        ECE's bins take ``"informative"`` in place of ``"calibrated"`` or
        ``"hierarchical"`` (bins of increasing confidence are not
        exchangeable; its default model shares an LLO map across bins).
    level : float, default=0.95
        Credible level of the intervals.
    rope : float, default=0.05
        Half-width of the region of practical equivalence of group differences.
    decision_probability : float, default=0.95
        The probability a region (below, within or above the ROPE) needs to
        be a difference's ``decision``; else it is ``"undecided"``.
    n_bins : int, default=10
        Confidence bins of the ECE and the reliability diagram.
    cost_matrix : array-like of shape (n_classes, n_classes), default=None
        ``C[true, predicted]``; adds the expected misclassification cost.
    random_state : int, default=0
        Seed of the Monte Carlo draws (ECE, differences, overall intervals).
    checksum : bool, default=True
        Record the file's SHA-256.
    extra_labels : tuple of two arrays (rows, codes), default=None
        Labels recorded elsewhere (a labeling session): 0-based rows of the
        file and class indices. A row labeled in the file too must agree.
    design_groups : array-like of shape (n_rows,), default=None
        The group of every row of the file, when the labels were drawn at
        unequal rates across these groups but at random within each (a
        labeling session's groups: :meth:`LabelingSession.design_groups`).
        The ECE and the reliability bins are then estimated within each group
        and weighted by the groups' rows
        (``BayesianCalibrationError(grouping="external")``), which keeps them
        unbiased under the design.
    meta : list of str, default=None
        Also predict the accuracy of the *unlabeled* rows from the labeled
        ones with these :mod:`skassess.meta` methods (``"confidence"``,
        ``"atc"``, ``"doc"``, ``"calibrated_scores"``, ``"meta_model"``,
        ``"combined"``; the scores are the only features). Unlike the
        posterior, which assumes the labeled rows are a sample of all rows,
        these predictors allow the unlabeled rows to have drifted;
        ``"confidence"``, ``"meta_model"`` and ``"combined"`` come with the interval
        of the shipped uncertainty model (coverage ``min(level, 0.95)``).
        Needs at least 20 labeled rows of two classes.
    meta_rows : int, default=100_000
        ``meta`` uses a uniform sample (seeded) of at most this many labeled
        and this many unlabeled rows.
    annotations : pandas.DataFrame, default=None
        Labels that name their annotators, who may slip: columns ``row``
        (0-based row of the file) or ``id`` (the file's item id),
        ``annotator`` and ``label`` (class index), an item labeled by
        several annotators once by each (:func:`read_annotations` reads them
        from a CSV). Every estimate is
        then the mixture over the true labels under the annotators' one-coin
        model (user guide, *When labels are noisy*), and the assessment holds
        ``annotators`` and ``agreement``. The file itself must label no row.
        Not with ``meta``.
    annotator_prior : tuple of two floats, float or dict, default=None
        The estimators' ``annotator_prior`` with ``annotations``; None: their
        default (each annotator 85 to 99.9 % right, 95 % prior interval).
    progress : bool, default=False
        A progress line of the run's steps on standard error (tqdm), shown
        once the run takes more than 2 s.

    Returns
    -------
    FileAssessment
    """
    start = time.perf_counter()
    if not (isinstance(decision_probability, Real) and 0.5 <= decision_probability <= 1):
        raise ValueError(
            f"decision_probability must be a number in [0.5, 1]; got {decision_probability!r}."
        )
    meta = check_meta(meta)
    if annotations is not None and (meta or extra_labels is not None):
        raise ValueError(
            "annotations: the labels with their annotators are the assessment's only labels; "
            "pass neither meta nor extra_labels with them."
        )
    annotated = (
        None
        if annotations is None
        else AnnotatedRows(annotations, annotations.attrs.get("where", "annotations"))
    )
    sf = scores_file if scores_file is not None else ScoresFile(path, **columns)
    seed = int(random_state)
    if design_groups is not None:
        design_groups = np.asarray(design_groups)
    est = assessors(
        sf.group_columns, prior, n_bins, cost_matrix, seed, design=design_groups is not None
    )
    steps = Steps(5 + len(sf.group_columns) + bool(meta) + bool(checksum), progress)
    try:
        n_rows = n_labeled = 0
        if extra_labels is not None:
            extra_rows, extra_codes = (np.asarray(a, dtype=np.int64) for a in extra_labels)
            order = np.argsort(extra_rows)
            extra_rows, extra_codes = extra_rows[order], extra_codes[order]
        if meta:
            rngs = np.random.default_rng(seed).spawn(2)
            samples = RowSample(meta_rows, rngs[0]), RowSample(meta_rows, rngs[1])
        steps.step("reading the scores file")
        for chunk in sf.iter_chunks(chunk_rows):
            if extra_labels is not None:
                lo, hi = np.searchsorted(extra_rows, [chunk.offset, chunk.offset + len(chunk)])
                rows, codes = extra_rows[lo:hi] - chunk.offset, extra_codes[lo:hi]
                clash = (chunk.labels[rows] >= 0) & (chunk.labels[rows] != codes)
                if clash.any():
                    i = int(rows[np.argmax(clash)]) + chunk.offset
                    raise ValueError(f"extra_labels: row {i + 1} has another label in the file.")
                chunk.labels[rows] = codes
            if annotated is not None:
                annotated.add(
                    chunk,
                    None
                    if design_groups is None
                    else _design_rows(design_groups, chunk.offset, len(chunk)),
                )
            for key, e in est.items():
                group = chunk.groups[key[6:]].to_numpy() if key.startswith("group:") else None
                if key == "ece" and design_groups is not None:
                    group = _design_rows(design_groups, chunk.offset, len(chunk))
                e.partial_fit(chunk.scores, chunk.labels, group_by=group)
            n_rows += len(chunk)
            n_labeled += int((chunk.labels >= 0).sum())
            steps.note(f"{n_rows:,} rows")
            if meta:
                known = chunk.labels >= 0
                samples[0].add(chunk.scores[known], chunk.labels[known])
                samples[1].add(chunk.scores[~known], chunk.labels[~known])
        if design_groups is not None and len(design_groups) != n_rows:
            raise ValueError(f"design_groups has {len(design_groups)} rows; the file has {n_rows}.")
        if annotated is not None:
            steps.note("the annotators' slips")
            est = {k: annotated.mix(e, k, annotator_prior) for k, e in est.items()}
            n_labeled = int(annotated.rows.size)
        unlabeled = None
        if meta:
            steps.step("the unlabeled rows (skassess.meta)")
            unlabeled = predict_unlabeled(
                *samples, meta, len(sf.classes), level=level, random_state=seed
            )
        if checksum:
            steps.step("the file's SHA-256")
        source = {
            "file": str(sf.path),
            "bytes": sf.size,
            "rows": n_rows,
            "labeled": n_labeled,
            "sha256": sf.checksum() if checksum else None,
            "columns": sf.describe(),
            "seconds": None,
        }
        settings = assessment_settings(
            prior, level, rope, decision_probability, n_bins, seed, cost_matrix, meta
        )
        out = summarize(est, source, settings, steps, unlabeled=unlabeled)
        if annotated is not None:
            out.annotators = est["by_class"].annotator_summary(level)
            out.agreement = est["by_class"].annotator_agreement()
        source["seconds"] = round(time.perf_counter() - start, 3)
        return out
    finally:
        steps.close()


def _design_rows(design_groups, offset, n):
    """The design groups of the ``n`` file rows from ``offset``."""
    rows = design_groups[offset : offset + n]
    if len(rows) != n:
        raise ValueError(
            f"design_groups has {len(design_groups)} rows; the file has more "
            f"(at least {offset + n})."
        )
    return rows


def assessment_settings(prior, level, rope, decision_probability, n_bins, seed, cost, meta):
    """The ``settings`` of a :class:`FileAssessment`."""
    return {
        "prior": prior,
        "level": level,
        "rope": rope,
        "decision_probability": decision_probability,
        "n_bins": n_bins,
        "random_state": seed,
        "cost_matrix": None if cost is None else np.asarray(cost).tolist(),
        "meta": meta,
    }


def summarize(est, source, settings, steps, unlabeled=None):
    """The :class:`FileAssessment` of fitted :func:`assessors` (``source["columns"]``
    names the classes and group columns)."""
    classes = list(source["columns"]["classes"])
    level, rope, seed = settings["level"], settings["rope"], settings["random_state"]
    decide = settings["decision_probability"]

    def class_name(k):
        return classes[int(k)]

    steps.step("the posterior per predicted class")
    by_class = est["by_class"].summary(level)
    by_class.index = pd.Index([class_name(k) for k in by_class.index], name="predicted class")
    steps.step("the overall intervals")
    overall = []
    names = {"by_class": "accuracy", "ece": "ECE", "cost": "expected cost"}
    for key, label in names.items():
        if key in est:
            lower, upper = est[key].overall_interval(level)
            overall.append(
                {"metric": label, "mean": est[key].overall_mean(), "lower": lower, "upper": upper}
            )
    by_group, differences = {}, {}
    steps.step("the differences between classes")
    differences["predicted class"] = _differences(
        est["by_class"], class_name, rope, level, seed, decide
    )
    for g in source["columns"]["group_columns"]:
        steps.step(f"the posterior per {g}")
        table = est[f"group:{g}"].summary(level)
        table.index.name = g
        by_group[g] = table
        differences[g] = _differences(est[f"group:{g}"], str, rope, level, seed, decide)
    steps.step("the calibration error")
    reliability = est["ece"].summary(level)
    return FileAssessment(
        source=source,
        settings=settings,
        overall=pd.DataFrame(overall).set_index("metric"),
        by_class=by_class,
        by_group=by_group,
        differences=differences,
        reliability=reliability,
        estimators=est,
        unlabeled=unlabeled,
    )
