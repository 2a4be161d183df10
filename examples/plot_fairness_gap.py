"""
Is a true positive rate the same for two groups? A posterior with a ROPE
========================================================================

Adult income scores of a scikit-learn logistic regression are bundled with
skassess. With 500 random labels we estimate the true positive rate of White and
non-White people, the posterior of their difference, and the probability that
the gap is within +-0.05 (practically fair), beside the values on all 10,054
labels. Only about 10 of the 500 labeled rows are non-White positives, so the
posterior of the gap stays wide; with other seeds it can even point the wrong
way with confidence (seed 0 does: a draw in the 2 % tail). Scores of the
unlabeled rows, calibrated, are what narrows such gaps.
"""

import matplotlib.pyplot as plt
import numpy as np

from skassess import BayesianAccuracy
from skassess.datasets import load_adult_scores
from skassess.metrics import DifferenceDisplay, compare_groups

# %%
# 500 random labels of the Adult income scores of a logistic regression.
data = load_adult_scores("race")
scores = data.scores["LR"].to_numpy()
groups = np.where(data.sensitive["race"] == "White", "White", "non-White")
y = np.full(len(scores), -1)
labeled = np.random.default_rng(1).choice(len(y), size=500, replace=False)
y[labeled] = data.target.to_numpy()[labeled]

# %%
# The true positive rate per group, and the posterior of their difference.
tpr = BayesianAccuracy(metric="tpr", grouping="external", random_state=0)
tpr.fit(scores, y, group_by=groups)
print(tpr.summary().round(3))
gap = compare_groups(tpr, "White", "non-White", rope=0.05)
print(gap.summary().round(3).to_string(index=False))
# %%
# What all 10,054 labels say, for comparison.
truth = BayesianAccuracy(metric="tpr", grouping="external").fit(
    scores, data.target.to_numpy(), group_by=groups
)
rates = truth.n_success_ / truth.n_labeled_
print("TPR on all labels:", dict(zip(truth.groups_, rates.round(3).tolist(), strict=True)))

# %%
# The posterior of the gap, with the ROPE.
disp = DifferenceDisplay.from_comparison(gap)
plt.show()
