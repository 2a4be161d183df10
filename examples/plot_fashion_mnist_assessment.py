"""
Accuracy and calibration per class from 300 labels
==================================================

An MLP's probabilities on the 10,000 Fashion-MNIST test images are bundled with
skassess. We reveal 300 random labels, fit the accuracy of each predicted class
(the default calibrated prior) and classwise calibration posteriors, find the
least accurate class, and plot accuracy against ECE per class with 95 %
intervals (as in Fig. 1 of the AAAI-21 paper) next to a Bayesian reliability
diagram.
"""

import matplotlib.pyplot as plt
import numpy as np

from skassess import BayesianAccuracy, BayesianCalibrationError
from skassess.datasets import load_fashion_mnist_scores
from skassess.metrics import PosteriorDisplay, ReliabilityDisplay, rank_groups

# %%
# 300 labels, drawn at random; -1 marks the other rows as unlabeled.
data = load_fashion_mnist_scores()
y = np.full(len(data.target), -1)
labeled = np.random.default_rng(0).choice(len(y), size=300, replace=False)
y[labeled] = data.target[labeled]

# %%
# The accuracy of each predicted class, and which class is the least accurate.
accuracy = BayesianAccuracy(classes=data.class_names, random_state=0)  # the calibrated prior
accuracy.fit(data.scores, np.where(y >= 0, np.array(data.class_names, dtype=object)[y], -1))
print(accuracy.summary().round(3))
print("P(least accurate class):")
print(rank_groups(accuracy)["p_lowest"].sort_values(ascending=False).head(3).round(3))

# %%
# Calibration error per class and over all rows, then both plots.
classwise = BayesianCalibrationError(
    n_bins=5, classwise=True, classes=data.class_names, random_state=0
).fit(data.scores, np.where(y >= 0, np.array(data.class_names, dtype=object)[y], -1))
overall = BayesianCalibrationError(random_state=0).fit(data.scores, y)

fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
PosteriorDisplay.from_estimator(accuracy, classwise, ax=left)
left.set(xlabel="accuracy", ylabel="classwise ECE", title="Per class, 95 % intervals")
ReliabilityDisplay.from_estimator(overall, ax=right)
right.set_title("Bayesian reliability diagram, 300 labels")
fig.tight_layout()
plt.show()
