"""``skassess label``: a crash-safe labeling session, interactive or with an oracle file."""

import contextlib
import secrets
import sys

from ..exceptions import SessionError
from ..metrics import BayesianAccuracy, BayesianModelComparison
from ..samplers import (
    STRATEGY_NAMES,
    ActiveAssessor,
    ActiveModelSelector,
    ActiveTester,
    StopRule,
)
from ..session import LabelingSession
from ..utils._warnings import warn
from ._arguments import MODEL_STRATEGIES
from ._common import FILE_OPTIONS, file_options, open_scores, print_table
from ._keyboard import anytime_text, interactive, status_line
from ._models import ModelsFile
from ._names import named_groups, session_group_names
from ._oracle import CommandOracle, OracleQuit, read_oracle
from ._stored import check_classes, read_session

#: Settings that fix the query sequence: given again on resuming, they must not change.
FIXED = ("task", "strategy", "compare", "rope", "seed", "metrics", "metric", "confidence_bins")
DEFAULTS = {
    "task": "estimate",
    "strategy": "thompson",
    "compare": None,
    "rope": 0.05,
    "seed": None,
    "metrics": None,
    "metric": "accuracy",
    "confidence_bins": None,
}
#: Tasks whose answer --stop-probability confirms with anytime-valid intervals.
CERTIFIED_TASKS = ("least_accurate", "most_accurate", "compare")


# ----------------------------------------------------------------- settings
def _settings(args, path):
    """Column options, fixed settings and stop rules: stored ones on resuming."""
    options = file_options(args)
    fixed = {k: getattr(args, k) for k in FIXED}
    if isinstance(fixed["compare"], list):
        fixed["compare"] = list(fixed["compare"])
    stored_info = None
    if path.is_file() and path.stat().st_size > 0:
        _, stored_info = read_session(path)
        for name, stored in (
            ("columns", stored_info.get("options", {})),
            ("settings", stored_info.get("settings", {})),
        ):
            given = options if name == "columns" else fixed
            for key, value in given.items():
                # a setting added since the session started: stored as its default
                before = stored.get(key, DEFAULTS.get(key) if name == "settings" else None)
                if value is not None and value != before:
                    flag = "--" + key.replace("_", "-").replace("columns", "column")
                    raise SessionError(
                        f"{path}: the session was started with {key}={before!r}; "
                        f"{flag} gives {value!r}. Resume without it, or start a new "
                        "session file."
                    )
        options = {**dict.fromkeys(FILE_OPTIONS), **stored_info.get("options", {})}
        # a setting added since the session started takes its default
        fixed = {**DEFAULTS, **stored_info.get("settings", {})}
    else:
        if fixed["metric"] not in (None, "accuracy"):
            _check_rate_settings(fixed, args)
        if fixed["confidence_bins"] is not None:
            _check_bin_settings(fixed)
        if fixed["metrics"] is not None:
            given = [
                f"--{k}"
                for k in ("task", "strategy", "compare", "rope", "metric")
                if fixed[k] is not None
            ]
            given += ["--stop-probability"] if args.stop_probability is not None else []
            given += ["--anytime"] if args.anytime else []
            if given:
                raise ValueError(
                    f"--metrics estimates metrics with ActiveTester, which takes no {given[0]}."
                )
            fixed["strategy"] = "variance"  # ActiveTester's draw, stored for the record
            fixed["task"] = "metrics"
        if fixed["task"] == "compare_models":
            given = [f"--{k}" for k in ("compare", "rope") if fixed[k] is not None]
            given += ["--anytime"] if args.anytime else []
            if given:
                raise ValueError(
                    f"--task compare_models compares models with ActiveModelSelector, "
                    f"which takes no {given[0]}."
                )
            if fixed["strategy"] is None:
                fixed["strategy"] = MODEL_STRATEGIES[0]
            elif fixed["strategy"] not in MODEL_STRATEGIES:
                raise ValueError(
                    f"--task compare_models chooses items with one of {MODEL_STRATEGIES}; "
                    f"got --strategy {fixed['strategy']}."
                )
        elif fixed["strategy"] in set(MODEL_STRATEGIES) - set(STRATEGY_NAMES):
            raise ValueError(
                f"--strategy {fixed['strategy']} is a strategy of --task compare_models; "
                f"task {fixed['task'] or DEFAULTS['task']} takes one of {STRATEGY_NAMES}."
            )
        if fixed["strategy"] is None and args.anytime:
            fixed["strategy"] = "random"  # the anytime interval needs uniform draws
        if (
            fixed["strategy"] is None
            and args.stop_probability is not None
            and fixed["task"] in CERTIFIED_TASKS
        ):
            # Thompson sampling seldom labels the groups it is sure of from the scores,
            # so their anytime-valid intervals, hence the stop rule, would stay open.
            fixed["strategy"] = "lucb"
        fixed = {k: DEFAULTS[k] if v is None else v for k, v in fixed.items()}
        if fixed["seed"] is None:
            fixed["seed"] = secrets.randbelow(2**31 - 1)  # stored: resuming repeats it
    return options, fixed, stored_info


def _check_rate_settings(fixed, args):
    """A new session's --metric RATE: the estimate task, a group strategy, no --anytime."""
    flag = f"--metric {fixed['metric']}"
    if fixed["metrics"] is not None:
        raise ValueError(
            f"{flag} estimates a rate per group with ActiveAssessor; --metrics estimates "
            "metrics over all items with ActiveTester. Give one of them."
        )
    if fixed["task"] not in (None, "estimate"):
        raise ValueError(
            f"{flag} takes --task estimate (the default); the task {fixed['task']} "
            "compares or ranks groups by accuracy."
        )
    if fixed["strategy"] == "variance":
        # a binary rate's design-weighted estimate under-covers
        # (docs/benchmarks/designs.md, "Binary rates under an unequal design")
        raise ValueError(
            f"{flag}: --strategy variance draws items with unequal probabilities, whose "
            "weighted estimate of a binary rate is not reliable; use thompson (the "
            "default), bayes_ucb, epsilon_greedy or random, which draw uniformly "
            "within a group."
        )
    if args.anytime:
        raise ValueError(f"{flag}: --anytime gives an interval of accuracy only.")


def _check_bin_settings(fixed):
    """A new session's --confidence-bins: the estimate task (of accuracy or a rate)."""
    bins = fixed["confidence_bins"]
    if bins < 2:
        raise ValueError(f"--confidence-bins must be at least 2; got {bins}.")
    other = [
        flag
        for flag, given in (
            ("--metrics", fixed["metrics"] is not None),
            (f"--task {fixed['task']}", fixed["task"] not in (None, "estimate")),
        )
        if given
    ]
    if other:
        raise ValueError(
            f"--confidence-bins groups the items of the estimate task; it takes no {other[0]}."
        )


def _assessor(fixed, sf, group):
    classes = sf.classes
    if fixed["task"] == "compare_models":
        return ActiveModelSelector(
            BayesianModelComparison(model_names=list(sf.models), random_state=fixed["seed"]),
            strategy=fixed["strategy"],
            random_state=fixed["seed"],
        )
    if fixed.get("metrics"):
        if group is not None:
            raise ValueError("--metrics estimates metrics over all items; it takes no --group.")
        # the surrogate is refitted every 10 labels: a refit costs about a second, between
        # two items an interactive user waits for
        return ActiveTester(
            metrics=tuple(fixed["metrics"]), refit_every=10, random_state=fixed["seed"]
        )
    # What the session shows and stops on is the calibrated prior's posterior.
    metric = fixed.get("metric", "accuracy")
    if metric != "accuracy" and len(classes) != 2:
        raise ValueError(
            f"--metric {metric} is a binary rate (class 1 positive); the scores file has "
            f"{len(classes)} classes {classes!r}."
        )
    accuracy_task = fixed["task"] not in ("least_calibrated", "most_costly")
    estimator = BayesianAccuracy(metric=metric) if accuracy_task else None
    compare = fixed["compare"]
    bins = fixed.get("confidence_bins")
    if bins is not None:
        if group is not None:
            raise ValueError(
                "--confidence-bins groups the items by confidence; it takes no --group."
            )
        estimator = BayesianAccuracy(
            metric=metric, grouping="score_bins", binning="quantile", n_bins=bins
        )
    elif group is not None:
        estimator = BayesianAccuracy(metric=metric, grouping="external")
    elif compare is not None:
        bad = [c for c in compare if c not in classes]
        if bad:
            raise ValueError(f"--compare: {bad[0]!r} is not a class; classes: {classes!r}.")
        compare = [classes.index(c) for c in compare]
    return ActiveAssessor(
        estimator,
        strategy=fixed["strategy"],
        task=fixed["task"],
        compare=None if compare is None else tuple(compare),
        rope=fixed["rope"],
        random_state=fixed["seed"],
    )


def prepare(args, path, check=None):
    """What ``skassess label`` (and ``serve``) opens a session with, every check first.

    ``check(args, fixed)`` runs the command's own checks of its flags against the
    session's settings before the scores file is read.

    Returns
    -------
    sf, table, group, assessor, info, fixed
    """
    from pathlib import Path

    options, fixed, stored = _settings(args, path)
    models = fixed["task"] == "compare_models"
    if check is not None:
        check(args, fixed)
    sf = open_pool(args.scores, options, models=models)
    checksum = sf.checksum()
    if stored is not None and stored.get("sha256") != checksum:
        raise SessionError(changed_message(args.scores, checksum, stored.get("sha256")))
    if stored is not None:
        check_classes(path, stored, sf.classes)
    if len(sf.group_columns) > 1:
        raise ValueError(f"{args.command} takes at most one --group column.")
    table = sf.read()
    group = table.groups[sf.group_columns[0]].to_numpy() if sf.group_columns else None
    assessor = _assessor(fixed, sf, group)
    inputs = [str(Path(p).resolve()) for p in args.scores]
    info = {
        "input": inputs if models else inputs[0],
        "sha256": checksum,
        "options": options,
        "settings": fixed,
        "classes": sf.classes,
    }
    if models:
        info["models"] = list(sf.models)
    return sf, table, group, assessor, info, fixed


def open_session(path, sf, table, group, assessor, info, fixed, read_only=False):
    """The :class:`LabelingSession` of what :func:`prepare` gives."""
    return LabelingSession(
        path,
        table.scores,
        table.labels,
        assessor=assessor,
        group_by=group,
        ids=table.ids,
        info=info,
        group_names=session_group_names(fixed, group, sf),
        read_only=read_only,
    )


def needs_group_task(fixed, who):
    """Refuse, naming ``who``, a session whose sampler takes every label as the truth."""
    if fixed.get("metrics") or fixed["task"] == "compare_models":
        flag = "--metrics" if fixed.get("metrics") else "--task compare_models"
        raise ValueError(
            f"{who}: {flag} takes every label as the truth; labels that name their "
            "annotators need a group task (estimate, least_accurate, ...)."
        )


def _check_label_flags(args, fixed):
    """``skassess label``'s flags against the session's settings."""
    if fixed["task"] == "compare_models" and args.report:
        raise ValueError(
            "--report: the HTML report assesses one model; for --task compare_models use "
            "skassess export, whose JSON holds each model's posterior."
        )
    if fixed.get("metrics") and (args.stop_probability is not None or args.anytime):
        flag = "--stop-probability" if args.stop_probability is not None else "--anytime"
        raise ValueError(f"--metrics estimates metrics with ActiveTester, which takes no {flag}.")
    _check_annotator(args, fixed)
    if args.anytime and fixed["strategy"] != "random":
        raise ValueError(
            f"--anytime needs items drawn uniformly at random (--strategy random); this "
            f"session uses --strategy {fixed['strategy']}."
        )


def run(args):
    from pathlib import Path

    path = Path(args.session)
    sf, table, group, assessor, info, fixed = prepare(args, path, _check_label_flags)
    models = fixed["task"] == "compare_models"
    # started before the session file is created: a command that cannot start leaves none
    oracle = (
        CommandOracle(args.oracle_command, table, sf.classes)
        if args.oracle_command
        else contextlib.nullcontext()
    )
    with (
        oracle,
        open_session(path, sf, table, group, assessor, info, fixed) as session,
    ):
        print(
            f"Session {path}: {'resumed' if session.resumed else 'new'}; "
            f"{session.n_labeled} labels so far; task {fixed['task']}, strategy "
            f"{fixed['strategy']}; pool of {len(table):,} items, "
            f"{int((table.labels >= 0).sum()):,} labeled in the file."
        )
        budget, stop_p, stop_w = args.budget, args.stop_probability, args.stop_width
        certifies = getattr(session.assessor_, "certifies", None)
        if stop_p is not None and not (certifies is not None and certifies()):
            warn(
                f"--stop-probability with task {fixed['task']} and strategy "
                f"{fixed['strategy']} stops on the posterior probability alone, which does "
                "not keep its error rate when read after every label (least_accurate, "
                "most_accurate and compare with a group strategy are confirmed by "
                "anytime-valid intervals)."
            )
        left = len(table) if budget is None else max(budget - session.n_labeled, 0)
        try:
            _label_items(args, session, table, sf, oracle, left, stop_p, stop_w)
        except KeyboardInterrupt:
            # every answer given is committed; the one being written either is or is not
            print(
                f"\nInterrupted: saved {session.n_labeled} labels in {path}; run the same "
                "command to resume.",
                file=sys.stderr,
            )
            return 130
        print("\n" + status_line(session, budget, final=True))
        summary = named_groups(session.assessor_.summary(), session.assessor_, sf)
        metric = fixed.get("metric", "accuracy")
        title = (
            "Posterior per group" + ("" if metric == "accuracy" else f" ({metric.upper()})")
            if isinstance(session.assessor_, ActiveAssessor)
            else "Posterior per model (p_best: the probability that it is the most accurate)"
            if models
            else "Estimates (difference estimator, 95% confidence intervals)"
        )
        print_table(
            title,
            summary[
                [
                    c
                    for c in (
                        "n_labeled",
                        "weight",
                        "mean",
                        "estimate",
                        "se",
                        "lower",
                        "upper",
                        "flagged",
                        "labels_lower",
                        "labels_upper",
                        "p_best",
                    )
                    if c in summary
                ]
            ],
        )
        if args.anytime:
            print(anytime_text(session, table, fixed["seed"]))
        print(f"Saved in {path}; the same command resumes the session.")
        if args.report:
            from ._report import session_report

            session_report(session, sf, args.report, seed=fixed["seed"])
            print(f"Wrote the report to {args.report}")
    sys.stdout.flush()
    return 0


def _check_annotator(args, fixed):
    """--annotator needs a session that estimates with an ActiveAssessor; --repeat-share
    needs --annotator."""
    if not 0 <= args.repeat_share < 1:
        raise ValueError(f"--repeat-share must be in [0, 1); got {args.repeat_share}.")
    if args.repeat_share > 0 and args.annotator is None:
        raise ValueError("--repeat-share needs --annotator: who labels the repeats.")
    if args.annotator is None:
        return
    if args.anytime:
        raise ValueError(
            "--anytime takes every label as the truth; it cannot be used with --annotator."
        )
    needs_group_task(fixed, "--annotator")
    if not args.annotator.strip() or len(args.annotator) > 200:
        raise ValueError(
            f"--annotator must be a name of 1 to 200 characters; got {args.annotator!r}."
        )


def _label_items(args, session, table, sf, oracle, left, stop_p, stop_w):
    """Label until the budget, a stop rule, the oracle's end or the user's quit."""
    budget = args.budget
    who = {"annotator": args.annotator, "repeat_share": args.repeat_share}
    if args.oracle:
        codes = read_oracle(args.oracle, table.ids, sf.classes, sf.id_column)
        session.run(
            lambda row: None if codes[row] < 0 else int(codes[row]),
            left,
            stop=StopRule(probability=stop_p, width=stop_w),
            progress=not args.no_progress,
            **who,
        )
        skipped = len(session.assessor_.skipped_)
        if skipped:
            print(f"{skipped} items had no label in {args.oracle}: skipped.")
    elif args.oracle_command:
        try:
            session.run(
                oracle,
                left,
                stop=StopRule(probability=stop_p, width=stop_w),
                progress=not args.no_progress,
                **who,
            )
        except OracleQuit:
            print("The oracle command answered quit.")
    else:
        interactive(session, table, sf.classes, budget, stop_p, stop_w, **who)


def open_pool(paths, options, *, models=False):
    """The scores file of a session, or the models' files of a model comparison."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    if models:
        return ModelsFile(paths, options)
    if len(paths) > 1:
        raise ValueError(
            f"{len(paths)} scores files were given: several files are the models of "
            "--task compare_models; the other tasks label one file."
        )
    return open_scores(paths[0], options)


def changed_message(paths, now, stored):
    """The error of a session whose scores file (or one of its models' files) changed."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    now = [now] if isinstance(now, str) else list(now)
    stored = [stored] if isinstance(stored, str) else list(stored or [])
    if len(now) != len(stored):
        return (
            f"The session was started on {len(stored)} scores file(s); {len(now)} were given. "
            "Resume with the original files, or start a new session file."
        )
    for path, a, b in zip(paths, now, stored, strict=True):
        if a != b:
            return (
                f"{path} changed since the session started (sha256 now {a[:16]}..., stored "
                f"{b[:16]}...). Resume with the original file, or start a new session file."
            )
    return "The scores files changed since the session started."  # pragma: no cover
