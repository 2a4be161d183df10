"""What the labels say of the annotators: their accuracy, their agreement, where to ask again."""

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..utils._params import LEVEL, validate_args


class AnnotatorReports:
    """Mixin of the estimators fitted with ``label_noise``: reports on the annotators.

    Reads ``annotator_names_``, ``annotator_labels_`` (class codes of the
    labeled rows per annotator), the one-coin model ``_annotators``, the
    labeled rows' positions ``_label_rows`` and the share of the draws of the
    true labels in which the black box is right on each, ``_right_proba``.
    """

    def annotator_agreement(self):
        """Agreement on the rows labeled more than once: Cohen's kappa per pair, Fleiss' overall.

        Returns
        -------
        agreement : pandas.DataFrame
            One row per pair of annotators who labeled rows in common
            (``n_common``, ``agreement``: their share of equal labels, and
            Cohen's ``kappa``), then a row ``("all", "")`` with Fleiss' kappa
            over every row with two labels or more (``n_common``: those rows).
            Empty but for that row when no row has two labels.
        """
        from sklearn.metrics import cohen_kappa_score

        check_is_fitted(self, "annotator_names_")
        labels, names = self.annotator_labels_, list(self.annotator_names_)
        rows = []
        for a in range(len(names)):
            for b in range(a + 1, len(names)):
                both = (labels[:, a] >= 0) & (labels[:, b] >= 0)
                if not both.any():
                    continue
                la, lb = labels[both, a], labels[both, b]
                same = bool(np.all(la == lb)) and np.unique(la).size == 1
                kappa = 1.0 if same else cohen_kappa_score(la, lb)
                rows.append((names[a], names[b], int(both.sum()), float(np.mean(la == lb)), kappa))
        several = int(((labels >= 0).sum(axis=1) >= 2).sum())
        rows.append(("all", "", several, float("nan"), fleiss_kappa(labels)))
        return pd.DataFrame(
            rows, columns=["annotator", "other", "n_common", "agreement", "kappa"]
        ).set_index(["annotator", "other"])

    def repeat_utilities(self):
        """Where a second label is worth most: the doubt on each labeled row.

        The posterior variance ``p (1 - p)`` of whether the black box is right
        on the row, ``p`` its share among the draws of the true labels. It is
        largest where an annotator and the black box disagree (a slip, or an
        error of the black box) and where annotators disagree; a second label
        from another annotator settles it, and tells of the slip rates.

        Returns
        -------
        utilities : pandas.Series
            Indexed by the labeled rows' positions in ``X``, largest first.
        """
        check_is_fitted(self, "annotator_names_")
        p = self._right_proba
        series = pd.Series(p * (1 - p), index=pd.Index(self._label_rows, name="row"))
        return series.sort_values(ascending=False, kind="stable")

    @validate_args({"level": [LEVEL]})
    def annotator_summary(self, level=0.95):
        """Each annotator's labels and estimated accuracy (the one-coin model).

        Parameters
        ----------
        level : float, default=0.95
            Credible level of the accuracy's interval.

        Returns
        -------
        summary : pandas.DataFrame
            One row per annotator: ``n_labeled`` (rows it labeled),
            ``n_repeated`` (of them, rows someone else labeled too),
            ``agreement`` (share of its repeated rows where another label
            agrees with its own), ``mean``, ``lower`` and ``upper`` of its
            accuracy (a known accuracy has no spread).
        """
        check_is_fitted(self, "imputations_")
        labels = self.annotator_labels_
        given = labels >= 0
        repeated = given & (given.sum(1, keepdims=True) > 1)
        agree = np.zeros(labels.shape[1])
        for a in range(labels.shape[1]):
            rows = repeated[:, a]
            others = np.delete(labels[rows], a, axis=1)
            agree[a] = (
                np.mean((others == labels[rows, a][:, None]).any(1)) if rows.any() else np.nan
            )
        acc = self._annotators.accuracy_summary(level)
        return pd.DataFrame(
            {
                "n_labeled": given.sum(0),
                "n_repeated": repeated.sum(0),
                "agreement": agree,
                "mean": acc[:, 0],
                "lower": acc[:, 1],
                "upper": acc[:, 2],
            },
            index=pd.Index(self.annotator_names_, name="annotator"),
        )


def fleiss_kappa(labels):
    """Fleiss' kappa of the rows with two labels or more (any number of raters per row).

    ``labels`` of shape (n, A), -1 where none. ``(P - P_e) / (1 - P_e)``, with
    ``P`` the mean share of agreeing pairs among each row's labels and
    ``P_e`` the sum of the squared shares of the classes among all those
    labels. NaN without such rows, or when every label is the same class.
    """
    labels = np.asarray(labels)
    rows = labels[(labels >= 0).sum(axis=1) >= 2]
    if rows.size == 0:
        return float("nan")
    classes = np.unique(rows[rows >= 0])
    counts = np.stack([(rows == c).sum(axis=1) for c in classes], axis=1).astype(float)
    n = counts.sum(axis=1)
    agree = ((counts * (counts - 1)).sum(axis=1) / (n * (n - 1))).mean()
    share = counts.sum(axis=0) / counts.sum()
    chance = float(share @ share)
    return float("nan") if chance >= 1 else float((agree - chance) / (1 - chance))
