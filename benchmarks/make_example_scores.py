"""Write the example scores file shipped with the package (``skassess example``).

2,000 Fashion-MNIST test images scored by the bundled MLP: an id, one
``score_<class>`` column per class (6 decimals), a ``label`` column with 100
random labels (the rest empty, unlabeled) and, in a second file, every true
label (the oracle of a scripted labeling session).

    python benchmarks/make_example_scores.py
"""

from pathlib import Path

import numpy as np
import pandas as pd

from skassess.datasets import load_fashion_mnist_scores

OUT = Path(__file__).resolve().parents[1] / "skassess" / "datasets" / "data"
N_ROWS, N_LABELED = 2000, 100


def main():
    data = load_fashion_mnist_scores()
    names = data.class_names
    rows = np.arange(N_ROWS)
    ids = [f"img-{i:05d}" for i in rows]
    frame = pd.DataFrame({"id": ids})
    for k, name in enumerate(names):
        frame[f"score_{name}"] = data.scores[rows, k].round(6)
    labeled = np.random.default_rng(0).choice(N_ROWS, N_LABELED, replace=False)
    label = np.full(N_ROWS, "", dtype=object)
    label[labeled] = np.asarray(names, dtype=object)[data.target[labeled]]
    frame["label"] = label
    frame.to_csv(OUT / "example_scores.csv.gz", index=False)
    truth = pd.DataFrame({"id": ids, "label": np.asarray(names)[data.target[rows]]})
    truth.to_csv(OUT / "example_labels.csv.gz", index=False)
    print(f"wrote {OUT / 'example_scores.csv.gz'} and example_labels.csv.gz")


if __name__ == "__main__":
    main()
