"""The predictions ``g`` that ActiveTester's difference estimate may use as control variate.

Each candidate predicts every pool item's true class (a row of class
probabilities). The draws so far judge them: a candidate's loss is the
importance-weighted, metric-aware squared residual of what it predicted for
each drawn item *before* that item's label was known (prequential), so the
choice never looks at the draw it is used for.
"""

from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp, softmax

__all__ = ["CANDIDATES", "Draw", "calibrated", "choose", "mix", "strata"]

#: Weights of the components (scores, strata, calibrated scores, surrogate).
CANDIDATES = {
    "scores": (1.0, 0.0, 0.0, 0.0),
    "strata": (0.0, 1.0, 0.0, 0.0),
    "calibrated": (0.0, 0.0, 1.0, 0.0),
    "surrogate": (0.0, 0.0, 0.0, 1.0),
    "strata+surrogate": (0.0, 0.5, 0.0, 0.5),
    "calibrated+surrogate": (0.0, 0.0, 0.5, 0.5),
}


class Draw(NamedTuple):
    """One resolved draw: what the candidates are judged on."""

    pred: int  # the item's predicted class (its row)
    label: int  # its true class
    q: float  # its draw probability
    components: np.ndarray  # (4, K): each component's prediction before the label
    with_surrogate: bool  # the surrogate was fitted at the draw
    index: int  # the pool item


def _arrays(draws):
    a = np.array([d.pred for d in draws])
    y = np.array([d.label for d in draws])
    w = 1.0 / np.array([d.q for d in draws])
    return a, y, w


def strata(scores, pred, draws):
    """Label shares of each predicted class from the draws (importance-weighted), per item."""
    K = scores.shape[1]
    # One pseudo-count spread as the class's mean scores keeps unseen cells > 0.
    prior = np.zeros((K, K))
    np.add.at(prior, pred, scores)
    shares = prior / np.maximum(np.bincount(pred, minlength=K), 1)[:, None]
    if draws:
        a, y, w = _arrays(draws)
        num = np.zeros((K, K))
        np.add.at(num, (a, y), w / w.mean())
        shares = (num + shares) / (num.sum(axis=1, keepdims=True) + 1.0)
    return shares[pred]


def calibrated(scores, draws):
    """The scores tempered by the temperature of least weighted log-loss on the draws."""
    if not draws:
        return scores
    log_s = np.log(np.clip(scores, 1e-300, None))
    rows = np.array([d.index for d in draws])
    _, y, w = _arrays(draws)
    w = w / w.sum()

    def loss(log_t):
        z = log_s[rows] / np.exp(log_t)
        return -(w * (z[np.arange(len(y)), y] - logsumexp(z, axis=1))).sum()

    log_t = minimize_scalar(loss, bounds=(-4.0, 4.0), method="bounded").x
    return softmax(log_s / np.exp(log_t), axis=1)


def mix(name, components):
    """Candidate ``name`` from the components, shape ``(4, ..., K)`` -> ``(..., K)``."""
    return np.tensordot(np.array(CANDIDATES[name]), components, axes=(0, 0))


def choose(names, draws, grad):
    """The candidate of ``names`` with the least prequential loss on ``draws``.

    ``grad`` (n_metrics, K, K) weighs each residual by how it moves each metric.
    """
    if len(names) == 1:
        return names[0]
    a, y, w = _arrays(draws)
    comp = np.stack([d.components for d in draws], axis=1)  # (4, n, K)
    ga = grad[:, a, :]  # (n_metrics, n, K)
    losses = {}
    for name in names:
        resid = np.eye(comp.shape[-1])[y] - mix(name, comp)
        losses[name] = float((w * ((ga * resid[None]).sum(-1) ** 2).sum(0)).sum())
    return min(names, key=losses.get)
