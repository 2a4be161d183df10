"""Alert rules that accumulate evidence over a stream's chunks, at a bounded false-alarm rate.

A per-chunk rule alerts on a chunk's own score (``p_below``, or the
threshold minus the estimate). A sequential rule alerts on an exponentially
weighted moving average of the score over the stream's chunks so far,
``z_j = w s_j + (1 - w) z_(j-1)`` (``z_0 = s_0``; ``w = 1`` is the per-chunk
rule): evidence that persists adds up, a single chunk's noise is damped, and
an alert comes later after a drop. For each score and weight, the alert
threshold is chosen on the truth as the one that alerts on the most chunks
below the accuracy threshold with at most ``limit`` false alarms per 100
chunks above it: the best each rule can do, not a setting a monitor could
pick without labels.
"""

import numpy as np

#: The weights of the newest chunk in the moving average (1: the per-chunk rule).
WEIGHTS = (1.0, 0.7, 0.5, 0.3)


def moving_average(score, weight):
    """The exponentially weighted moving average of ``score`` (one stream, in order)."""
    out = np.empty(len(score))
    z = score[0]
    for j, s in enumerate(score):
        z = weight * s + (1.0 - weight) * z
        out[j] = z
    return out


def best_rule(score, above, streams, before, limit):
    """The alert threshold on ``score`` with the most chunks below alerted at <= ``limit``
    false alarms per 100 chunks ``above``: ``(below alerted, false alarms per 100, streams
    detected, median delay, threshold)``; ``streams`` lists each stream's chunk indices, in
    order, the drop at chunk ``before`` (``None``: no delays)."""
    best = (0, 0.0, 0, np.nan, np.inf)
    for cut in np.unique(score):
        fired = score >= cut
        fa = 100 * fired[above].sum() / max(above.sum(), 1)
        if fa > limit or fired[~above].sum() <= best[0]:
            continue
        delays = [
            np.argmax(fired[idx][before:]) for idx in streams or () if fired[idx][before:].any()
        ]
        found = len(delays)
        best = (int(fired[~above].sum()), fa, found, np.median(delays) if delays else np.nan, cut)
    return best


def sequential_at_false_alarms(ev, scores, threshold, before, limit=2.0):
    """Print, per score and moving-average weight, :func:`best_rule`'s row.

    ``ev`` holds the streams' chunks (``dataset``, ``family``, ``batch``,
    ``truth``); ``scores`` maps names to one value per chunk (higher: more
    reason to alert); ``threshold`` is each chunk's accuracy threshold.
    """
    above = (ev["truth"] >= threshold).to_numpy()
    streams = [
        g.sort_values("batch").index.to_numpy()
        for _, g in ev.groupby(["dataset", "family"], sort=False)
    ]
    streams = [ev.index.get_indexer(idx) for idx in streams]
    print(
        f"\nAlert rules on a moving average of the chunks' scores: the most chunks below the "
        f"threshold alerted at most {limit:g} false alarms per 100 chunks above it (the alert "
        "threshold chosen on the truth); weight 1 is the per-chunk rule"
    )
    print(
        "| score | weight of the newest chunk | chunks below alerted | false alarms per 100 | "
        "streams detected | median delay (chunks) |"
    )
    print("|---|---|---|---|---|---|")
    for name, score in scores.items():
        score = np.asarray(score, dtype=np.float64)
        for weight in WEIGHTS:
            smoothed = np.empty_like(score)
            for idx in streams:
                smoothed[idx] = moving_average(score[idx], weight)
            det, fa, found, delay, _ = best_rule(smoothed, above, streams, before, limit)
            print(
                f"| {name} | {weight:g} | {det} of {int((~above).sum())} | {fa:.1f} | "
                f"{found} of {len(streams)} | {delay:.1f} |"
            )
