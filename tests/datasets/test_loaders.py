import numpy as np
import pytest

from skassess.datasets import load_adult_scores, load_fashion_mnist_scores
from skassess.utils import check_scores


@pytest.mark.parametrize("attribute", ["race", "sex"])
def test_adult(attribute):
    data = load_adult_scores(attribute)
    assert data.scores.shape == (10054, 10)
    assert set(np.unique(data.target)) == {0, 1}
    assert "Ji, P. Smyth, M. Steyvers" in data.DESCR and "MIT" in data.DESCR
    for name in data.model_names:
        check_scores(data.scores[name].to_numpy())


def test_adult_bad_attribute():
    match = "The 'sensitive_attribute' parameter of load_adult_scores must be a str among"
    with pytest.raises(ValueError, match=match):
        load_adult_scores("age")


def test_fashion_mnist():
    data = load_fashion_mnist_scores()
    check_scores(data.scores)
    assert data.target.shape == (10000,)
    assert np.bincount(data.target).tolist() == [1000] * 10
    assert len(data.class_names) == 10
