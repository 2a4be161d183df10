"""The keyboard loop of ``skassess label``: an item shown, a label read, the status line."""

import numpy as np

from ..exceptions import LabelError
from ..metrics import anytime_accuracy_interval
from ..samplers import StopRule
from ..session import LabelParser
from ..utils._validation import check_scores


# -------------------------------------------------------------------- items
def _describe(row, table, classes, width=400):
    lines = [f"item {table.ids[row]}  (row {row + 1})"]
    for col in table.display.columns:
        value = str(table.display[col].iloc[row])
        lines.append(f"  {col}: {value[:width]}{'...' if len(value) > width else ''}")
    s = table.scores[row]
    if np.ndim(s) == 2:  # one row of scores per model
        for name, probs in zip(table.models, s, strict=True):
            k = int(np.argmax(probs))
            lines.append(f"  {name} predicts: {classes[k]} ({probs[k]:.3f})")
        return "\n".join(lines)
    probs = np.array([1 - s, s]) if np.ndim(s) == 0 else np.asarray(s)
    top = np.argsort(-probs)[:3]
    shown = ", ".join(f"{classes[k]} {probs[k]:.3f}" for k in top)
    lines.append(f"  model predicts: {classes[top[0]]}   (scores: {shown})")
    return "\n".join(lines)


def _help(classes):
    parser = LabelParser(classes)
    keys = "  ".join(f"#{k}={c}" for k, c in enumerate(classes))
    numbers = (
        "#k"
        if parser.numeric_names
        else "#k or k (a bare number is a class number when no class is named by one)"
    )
    shadowed = parser.shadowed_commands()
    note = (
        f" Here {', '.join(repr(w) for w in shadowed)} "
        f"{'is a class name' if len(shadowed) == 1 else 'are class names'}: type "
        f"{', '.join(':' + w for w in shadowed)} for the command."
        if shadowed
        else ""
    )
    return (
        f"Type a class name, or the class number {numbers} ({keys}); s = skip (cannot "
        "tell), u = undo the last answer, q = quit (the session is saved; run the same "
        "command to resume), ? = this help. A class name always wins over a command or "
        f"a number; :s, :u, :q, :? are always the commands.{note}"
    )


def _parse(answer, classes):
    """``(kind, class index)`` of a typed answer: a label, a command or unknown."""
    parser = LabelParser(classes)
    command = parser.command(answer)
    if command is not None:
        return command, None
    try:
        return "label", parser.parse(answer, numbers=True)
    except LabelError as exc:
        return "unknown", str(exc)


def status_line(session, budget, answer=None, *, final=False):
    """The status line: labels so far and the answer; the last one (``final``) also
    counts the labels the scores file gave, which the table's counts include."""
    left = "" if budget is None else f"/{budget}"
    if answer is None:
        answer = session.answer()
    held = f"{session.n_labeled}{left} labeled"
    if session.n_repeats:
        held += f" ({session.n_repeats} second labels)"
    # n_labeled_ counts the pool: on the last line only, not between two items
    before = session.assessor_.n_labeled_ - session.n_labeled + session.n_repeats if final else 0
    if before > 0:
        held += (
            f" in this session; {session.assessor_.n_labeled_:,} in all, with the "
            f"{before:,} the scores file labels"
        )
    return f"[{held}] {answer['text']}"


def _stop_reason(session, answer, budget, stop_p, stop_w):
    if budget is not None and session.n_labeled >= budget:
        return f"the budget of {budget} labels is reached"
    rule = StopRule(probability=stop_p, width=stop_w)(answer)
    if rule == "probability":
        if answer.get("certified") is not None:
            return f"the answer's probability and its anytime-valid level reached {stop_p}"
        return f"the answer's probability reached {stop_p}"
    if rule == "width":
        return f"every group's 95% interval is at most {stop_w} wide"
    if session.exhausted:
        return "no unlabeled item is left"
    return None


def interactive(
    session,
    table,
    classes,
    budget,
    stop_p,
    stop_w,
    read=input,
    *,
    annotator=None,
    repeat_share=0.0,
):
    print(_help(classes))
    while True:
        # One answer per item: the stop rules and the status line share it.
        answer = session.answer()
        reason = _stop_reason(session, answer, budget, stop_p, stop_w)
        if reason:
            print(f"Stopping: {reason}.")
            return
        row, repeat = session.next_item(annotator, repeat_share)
        print("\n" + status_line(session, budget, answer))
        if repeat:
            print("A second label: this item was labeled before by someone else.")
        print(_describe(row, table, classes))
        try:
            answer = read("label> ")
        except EOFError:
            print()
            return
        kind, code = _parse(answer, classes)
        if kind == "label":
            session.tell(row, code, annotator=annotator)
        elif kind == "skip":
            session.skip(row)
        elif kind == "undo":
            last = session.undo()
            print(
                "Nothing to undo."
                if last is None
                else f"Undone: the {last['kind']} of item {last['item_id']}."
            )
        elif kind == "quit":
            return
        elif kind == "help":
            print(_help(classes))
        else:
            print(f"{code} Type ? for help.")


def anytime_text(session, table, seed, level=0.95):
    """The anytime-valid interval of the accuracy of all items, as one line.

    The session drew its items uniformly from the rows unlabeled in the file,
    so the confidence sequence is of their accuracy; the rows the file labels
    enter as they are.
    """
    rows, labels = session.labeled_rows()
    if rows.size == 0:
        return "Anytime-valid interval: no label in this session yet."
    known = table.labels >= 0
    unlabeled = np.flatnonzero(~known)
    position = np.full(len(table), -1)
    position[unlabeled] = np.arange(unlabeled.size)
    scores = check_scores(table.scores)  # one P(class 1) column as two columns
    lower, upper = anytime_accuracy_interval(
        scores[unlabeled], position[rows], labels.astype(np.int64), level=level, random_state=seed
    )
    pred = scores.argmax(axis=1)
    right_known = int((pred[known] == table.labels[known]).sum())
    n = len(table)
    lo = (right_known + unlabeled.size * lower[-1]) / n
    hi = (right_known + unlabeled.size * upper[-1]) / n
    return (
        f"Anytime-valid {level:.0%} interval of the accuracy of all {n:,} items: "
        f"[{lo:.4f}, {hi:.4f}] (from this session's {rows.size} labels in the order they "
        "were drawn; it holds however the session was stopped)."
    )
