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


#: A 1 x 1 PNG image (an item's picture in the labeling server's tests).
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)
