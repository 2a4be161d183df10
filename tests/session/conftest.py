import pytest

from skassess.datasets import load_fashion_mnist_scores


@pytest.fixture(scope="module")
def data():
    """The bundled Fashion-MNIST pool: 10,000 rows of scores and their labels."""
    return load_fashion_mnist_scores()
