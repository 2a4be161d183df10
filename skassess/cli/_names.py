"""How the command names a session's groups: class names, a group column's values, bins."""

import numpy as np
import pandas as pd

from ..samplers import ActiveAssessor


def session_group_names(settings, group, sf):
    """The names of a session's groups: its classes, unless the groups are a group
    column's values, ActiveTester's metrics or --confidence-bins bins."""
    if group is not None or settings.get("metrics") or settings.get("confidence_bins"):
        return None
    return sf.classes


def named_groups(summary, assessor, sf):
    """A summary indexed by class names (or the group column's name)."""
    summary = summary.copy()
    if not isinstance(assessor, ActiveAssessor):  # indexed by metric, or by model name
        return summary
    if assessor.estimator_.grouping_.name == "bin":  # confidence bins (--confidence-bins)
        edges = assessor.estimator_.grouping_.edges
        # as few decimals as tell the edges apart (saturated scores need many)
        d = next((d for d in range(3, 10) if len(set(np.round(edges, d))) == len(edges)), 10)
        last = len(edges) - 2
        summary.index = pd.Index(
            [
                f"[{edges[b]:.{d}f}, {edges[b + 1]:.{d}f}{']' if b == last else ')'}"
                for b in summary.index
            ],
            name="top-1 confidence",
        )
        return summary
    if assessor.estimator_.grouping_.uses_group_by:
        summary.index.name = sf.group_columns[0] if sf.group_columns else "group"
        return summary
    names = np.asarray(sf.classes, dtype=object)
    if isinstance(summary.index, pd.MultiIndex):
        summary.index = summary.index.set_levels(
            [names[summary.index.levels[0]]] + list(summary.index.levels[1:])
        )
    else:
        summary.index = pd.Index(names[summary.index.to_numpy()], name="predicted class")
    return summary
