"""Tune a random forest on breast_cancer with PrivateBOSearchCV: the untuned forest, a search on
exact scores and a private search (each candidate's score released with epsilon-LDP).

    python examples/search_random_forest.py [--n-iter 30] [--cv 5] [--out DIR] [--quick]

About a minute on two cores (``--quick``: a few seconds). The space is the GO-UCB paper's
(App. D.2, ``privtune.presets``). Saves ``search_random_forest.png`` under ``examples/results``.
"""

from _search_example import cv_score, options, plot_searches, report
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier

from privtune import PrivateBOSearchCV
from privtune.presets import random_forest_space

args = options(__doc__)
X, y = load_breast_cancer(return_X_y=True)
forest = RandomForestClassifier(random_state=0)
default = cv_score(forest, X, y, args.folds)
common = dict(n_iter=args.n_iter, cv=args.folds, n_jobs=2, random_state=0, verbose=1)

# Exact CV scores: the best mean test score wins.
exact = PrivateBOSearchCV(forest, random_forest_space(), **common).fit(X, y)
# Each candidate's mean accuracy is released as clip(acc, 0, 1) + Laplace(1 / epsilon).
private = PrivateBOSearchCV(forest, random_forest_space(), epsilon=10.0, **common).fit(X, y)
# Only the data owner can check the pick's true score: it is not part of the released results.
true = cv_score(private.best_estimator_, X, y, args.folds)
report(default, exact, private, true)
plot_searches(
    default,
    exact,
    private,
    true,
    args.out / "search_random_forest.png",
    "A random forest on breast_cancer: untuned, tuned, tuned privately",
)
