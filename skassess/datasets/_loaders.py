"""Loaders of the real model outputs bundled with skassess."""

from importlib import resources

import numpy as np
import pandas as pd
from sklearn.utils import Bunch

from ..utils._params import validate_params
from ..utils._sklearn_compat import StrOptions

FASHION_MNIST_CLASSES = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)
ADULT_ATTRIBUTES = ("race", "sex")


def _descr(name):
    return resources.files(__package__).joinpath("descr", name).read_text(encoding="utf-8")


def _data(name):
    return resources.files(__package__).joinpath("data", name)


@validate_params(
    {
        "sensitive_attribute": [StrOptions(set(ADULT_ATTRIBUTES))],
    },
    prefer_skip_nested_validation=True,
)
def load_adult_scores(sensitive_attribute="race"):
    """Load the Adult income test set with the scores of ten scikit-learn models.

    Read more in :ref:`adult_scores_dataset`.

    Parameters
    ----------
    sensitive_attribute : {"race", "sex"}, default="race"
        Which version to load: the models (and their Feldman repair) were
        trained treating this attribute as sensitive.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``scores`` (DataFrame, one column of P(income > 50K) per model),
        ``target`` (Series of 0/1), ``sensitive`` (DataFrame with ``race``,
        ``sex`` and ``race-sex``), ``frame`` (everything in one DataFrame),
        ``model_names`` and ``DESCR``.

    Examples
    --------
    >>> from skassess.datasets import load_adult_scores
    >>> data = load_adult_scores("sex")
    >>> data.scores.shape
    (10054, 10)
    >>> data.model_names[:2]
    ['GaussianNB', 'LR']
    """
    with _data(f"adult_{sensitive_attribute}_scores.csv.gz").open("rb") as fh:
        frame = pd.read_csv(fh, index_col=0, compression="gzip")
    score_cols = [c for c in frame.columns if c.startswith("score_")]
    scores = frame[score_cols].rename(columns=lambda c: c.removeprefix("score_"))
    return Bunch(
        scores=scores,
        target=frame["income-per-year"].astype(np.int64),
        sensitive=frame[["race", "sex", "race-sex"]],
        frame=frame,
        model_names=list(scores.columns),
        DESCR=_descr("adult_scores.rst"),
    )


def load_fashion_mnist_scores():
    """Load class probabilities of an MLP on the Fashion-MNIST test set.

    Read more in :ref:`fashion_mnist_scores_dataset`.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``scores`` (ndarray of shape (10000, 10), float64), ``target``
        (ndarray of shape (10000,), class indices), ``class_names`` and
        ``DESCR``.

    Examples
    --------
    >>> from skassess.datasets import load_fashion_mnist_scores
    >>> data = load_fashion_mnist_scores()
    >>> data.scores.shape
    (10000, 10)
    >>> float((data.scores.argmax(axis=1) == data.target).mean())
    0.8909
    """
    with _data("fashion_mnist_mlp.npz").open("rb") as fh:
        arrays = np.load(fh)
        scores = arrays["proba"].astype(np.float64)
        target = arrays["target"].astype(np.int64)
    return Bunch(
        scores=scores,
        target=target,
        class_names=list(FASHION_MNIST_CLASSES),
        DESCR=_descr("fashion_mnist_scores.rst"),
    )


@validate_params(
    {"name": [StrOptions({"scores", "labels"})]},
    prefer_skip_nested_validation=True,
)
def example_scores_path(name="scores"):
    """Path of the example scores file (or its labels) shipped with the package.

    ``"scores"``: a CSV (gzip) of 2,000 Fashion-MNIST test images scored by
    the bundled MLP, with an ``id``, one ``score_<class>`` column per class and
    a ``label`` column holding 100 true labels (empty elsewhere), the format
    ``skassess assess`` and ``skassess label`` read. ``"labels"``: every true
    label (``id``, ``label``), an oracle for a scripted labeling session.
    ``skassess example`` writes both, uncompressed, to a directory.

    Examples
    --------
    >>> from skassess.datasets import example_scores_path
    >>> from skassess.session import ScoresFile
    >>> ScoresFile(example_scores_path()).read().scores.shape
    (2000, 10)
    """
    with resources.as_file(_data(f"example_{name}.csv.gz")) as path:
        return path
