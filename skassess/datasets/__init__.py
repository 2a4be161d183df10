"""Real black-box model outputs bundled with skassess, and readers for prediction files."""

from ._loaders import example_scores_path, load_adult_scores, load_fashion_mnist_scores
from ._predictions import read_predictions, top_label_scores

__all__ = [
    "example_scores_path",
    "load_adult_scores",
    "load_fashion_mnist_scores",
    "read_predictions",
    "top_label_scores",
]
