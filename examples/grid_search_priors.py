"""
Choose the prior by cross-validated log predictive score
========================================================

``score`` is the mean log posterior predictive probability of held-out labels,
so :class:`~sklearn.model_selection.GridSearchCV` can choose the prior family
and strength. A well-calibrated
model (logistic regression) earns a strong informative prior; an over-confident
one (Gaussian naive Bayes) does not.
"""

import numpy as np
from sklearn.model_selection import GridSearchCV, RepeatedKFold

from skassess import BayesianAccuracy
from skassess.datasets import load_adult_scores

data = load_adult_scores("race")
target = data.target.to_numpy()
y = np.full(len(target), -1)
labeled = np.random.default_rng(0).choice(len(target), size=300, replace=False)
y[labeled] = target[labeled]

grid = {"prior": ["uniform", "informative"], "prior_strength": [2, 10, 50, 200]}
for model in ("LR", "GaussianNB"):
    search = GridSearchCV(
        BayesianAccuracy(grouping="score_bins", n_bins=10),
        grid,
        cv=RepeatedKFold(n_splits=5, n_repeats=2, random_state=0),
    ).fit(data.scores[model].to_numpy(), y)
    print(f"{model:<11} best {search.best_params_}, score {search.best_score_:.4f}")
