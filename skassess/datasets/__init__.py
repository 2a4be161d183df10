"""Real black-box model outputs bundled with skassess."""

from ._loaders import load_adult_scores, load_fashion_mnist_scores

__all__ = ["load_adult_scores", "load_fashion_mnist_scores"]
