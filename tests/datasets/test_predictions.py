"""read_predictions: both published formats, and bad files."""

import gzip
import pathlib

import numpy as np
import pytest

from skassess import ActiveAssessor, BayesianAccuracy, BayesianConfusionMatrix
from skassess.datasets import read_predictions, top_label_scores

SVHN = pathlib.Path(__file__).resolve().parents[3] / "shared/data/predictions/svhn_resnet152.txt.gz"


def test_full_probability_format(tmp_path):
    path = tmp_path / "p.txt.gz"
    with gzip.open(path, "wt") as f:
        f.write("1 0.2 0.7 0.1\n0 0.5 0.25 0.25\n2 0.1 0.1 0.8\n")
    data = read_predictions(path)
    assert data.full_probabilities and data.scores.shape == (3, 3)
    assert data.target.tolist() == [1, 0, 2] and data.predicted.tolist() == [1, 0, 2]
    np.testing.assert_allclose(data.confidence, [0.7, 0.5, 0.8])


def test_top1_format_supports_accuracy_and_the_uniform_confusion_matrix(tmp_path):
    path = tmp_path / "top1.csv"
    path.write_text(
        "Index,Correct,Predicted,Confidence\n0,cat,cat,0.9\n1,dog,cat,0.6\n"
        "2,dog,dog,0.8\n3,bird,dog,0.5\n"
    )
    data = read_predictions(path)
    assert data.class_names == ["bird", "cat", "dog"] and data.scores is None
    X = data.top_label_scores
    np.testing.assert_array_equal(X.argmax(1), data.predicted)
    np.testing.assert_allclose(X.max(1), data.confidence)
    acc = BayesianAccuracy(prior=np.array([1e-9, 1e-9])).fit(X, data.target)
    assert np.isclose(acc.overall_mean(), 0.5)
    # The labeled counts are the file's own: exact with a uniform prior.
    cm = BayesianConfusionMatrix(prior="uniform").fit(X, data.target, y_pred=data.predicted)
    np.testing.assert_array_equal(cm.counts_, [[0, 0, 0], [0, 1, 1], [1, 0, 1]])  # [pred, true]
    ActiveAssessor(BayesianConfusionMatrix()).fit(X, y_pred=data.predicted)


def test_top1_format_with_given_class_names(tmp_path):
    path = tmp_path / "top1.txt"
    path.write_text("Index Correct Predicted Confidence\n0 b a 0.9\n")
    data = read_predictions(path, class_names=["a", "b", "c"])
    assert data.target.tolist() == [1] and data.top_label_scores.shape == (1, 3)
    with pytest.raises(ValueError, match="'Correct' row 0 holds 'b', which is not in"):
        read_predictions(path, class_names=["a", "c"])


@pytest.mark.parametrize(
    "text, match",
    [
        ("1.5 0.5 0.5\n", "must hold class indices 0..1; row 0 has 1.5"),
        ("2 0.5 0.5\n", "must hold class indices"),
        ("0 0.5 0.6\n", "sum to 1"),
        ("0 1.0\n", "K >= 2"),
    ],
)
def test_bad_full_probability_files(tmp_path, text, match):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        read_predictions(path)


def test_class_names_need_the_top1_format(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("0 0.5 0.5\n")
    with pytest.raises(ValueError, match="class_names applies to the top-1 format only"):
        read_predictions(path, class_names=["a", "b"])


def test_top_label_scores_rejects_impossible_confidences():
    with pytest.raises(ValueError, match=r"in \[1/K, 1\] = \[0.3333, 1\]; row 1 has 0.2"):
        top_label_scores([0, 1], [0.9, 0.2], 3)
    with pytest.raises(ValueError, match="predicted classes must lie in 0..2"):
        top_label_scores([3], [0.9], 3)


def test_svhn_file():
    if not SVHN.exists():
        pytest.skip("../shared/data is not here")
    data = read_predictions(SVHN)
    assert data.scores.shape == (26032, 10)
    assert abs((data.predicted == data.target).mean() - 0.9675) < 1e-4
