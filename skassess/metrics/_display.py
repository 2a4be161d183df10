"""What the displays share: matplotlib's axes, a posterior's draws and their intervals.

matplotlib is imported only when a plot is drawn (``pip install skassess[plot]``).
"""

import numpy as np
import pandas as pd

from ..utils._plot import plot_axes
from ._calibration_error import BayesianCalibrationError

__all__ = ["draw_intervals", "group_draws", "plot_axes"]


def group_draws(estimator, n_draws, random_state):
    """Draws of the per-group quantity, one column per group."""
    if isinstance(estimator, BayesianCalibrationError) and estimator.classwise:
        return estimator.classwise_ece_samples(n_draws, random_state)
    return pd.DataFrame(
        estimator.groupwise_samples(n_draws, random_state), columns=estimator.groups_
    )


def draw_intervals(draws, level):
    tail = (1.0 - level) / 2.0
    lower, upper = np.quantile(draws.to_numpy(), [tail, 1 - tail], axis=0)
    # Identical draws (a fully labeled group) average to their value, not a rounding off.
    return np.clip(draws.mean(axis=0).to_numpy(), lower, upper), lower, upper
