"""Regenerate the bundled Fashion-MNIST model outputs.

Trains a scikit-learn multi-layer perceptron on the 60,000 Fashion-MNIST
training images and writes its class probabilities on the 10,000 test images
to ``skassess/datasets/data/fashion_mnist_mlp.npz``.

The images come from Debian's ``dataset-fashion-mnist`` package (MIT licence,
Zalando Research), which installs them under ``/usr/share/datasets/fashion-mnist``::

    sudo apt-get install dataset-fashion-mnist
    python benchmarks/make_fashion_mnist_scores.py

Pass ``--data-dir`` to read the four ``*-ubyte.gz`` files from elsewhere.
Training takes a few minutes on two cores.
"""

import argparse
import gzip
from pathlib import Path

import numpy as np
from sklearn.neural_network import MLPClassifier

DEFAULT_DIR = Path("/usr/share/datasets/fashion-mnist")
OUT = Path(__file__).resolve().parents[1] / "skassess/datasets/data/fashion_mnist_mlp.npz"


def read_idx(path):
    """Read an IDX file (the MNIST format) into a numpy array."""
    with gzip.open(path, "rb") as fh:
        data = fh.read()
    ndim = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--output", type=Path, default=OUT)
    args = parser.parse_args()

    def load(kind):
        images = read_idx(args.data_dir / f"{kind}-images-idx3-ubyte.gz")
        labels = read_idx(args.data_dir / f"{kind}-labels-idx1-ubyte.gz")
        return images.reshape(len(images), -1).astype(np.float32) / 255.0, labels

    X_train, y_train = load("train")
    X_test, y_test = load("t10k")
    model = MLPClassifier(
        hidden_layer_sizes=(256,),
        max_iter=30,
        batch_size=256,
        learning_rate_init=1e-3,
        random_state=0,
        verbose=True,
    )
    model.fit(X_train, y_train)
    proba = model.predict_proba(X_test).astype(np.float32)
    accuracy = float(np.mean(proba.argmax(axis=1) == y_test))
    confidence = float(proba.max(axis=1).mean())
    print(f"test accuracy {accuracy:.4f}, mean top-1 confidence {confidence:.4f}")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.output, proba=proba, target=y_test.astype(np.int8))
    print(f"wrote {args.output} ({args.output.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
