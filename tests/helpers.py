"""Data and helpers shared by the tests."""

import shutil

import numpy as np

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def browser():
    """A Chromium or Chrome on this machine, or None."""
    return next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)


def labeled_pool(n=600, k=3, seed=0, frac=0.3, concentration=0.6):
    """Scores from a Dirichlet, true labels drawn from them, a share ``frac`` labeled.

    Returns ``(scores, y, truth)`` with ``y = -1`` on the unlabeled rows.
    """
    rng = np.random.default_rng(seed)
    scores = rng.dirichlet(np.full(k, concentration), size=n)
    truth = np.array([rng.choice(k, p=p) for p in scores])
    y = np.where(rng.uniform(size=n) < frac, truth, -1)
    return scores, y, truth


def beta_scores(rng, n, shift):
    """Two-class scores whose top column is Beta(8 - shift, 2 + shift): drift as ``shift`` grows."""
    p = rng.beta(8 - shift, 2 + shift, n)
    return np.column_stack([p, 1 - p])
