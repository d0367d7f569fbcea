"""Tune a random forest on breast_cancer with PrivateBOSearchCV, without and with privacy.

    python examples/search_random_forest.py [--n-iter 40] [--cv 5] [--out DIR] [--quick]

The space is the GO-UCB paper's (App. D.2, ``privtune.presets``). Saves
``search_random_forest.png``: the best mean CV accuracy so far without privacy, and the scores
the private search released.
"""

from _search_example import options, plot_searches
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import cross_val_score

from privtune import PrivateBOSearchCV
from privtune.presets import random_forest_space

args = options(__doc__)
X, y = load_breast_cancer(return_X_y=True)
forest = RandomForestClassifier(random_state=0)

# Exact CV scores: GP-UCB, and the best mean test score wins.
exact = PrivateBOSearchCV(
    forest,
    random_forest_space(),
    algorithm="gp-ucb",
    n_iter=args.n_iter,
    cv=args.cv,
    random_state=0,
).fit(X, y)
print("non-private:", exact.best_params_, "CV accuracy", round(exact.best_score_, 4))

# Each candidate's mean accuracy is released as clip(acc, 0, 1) + Laplace(1 / epsilon).
private = PrivateBOSearchCV(
    forest,
    random_forest_space(),
    algorithm="moma",
    epsilon=2.0,
    n_iter=args.n_iter,
    cv=args.cv,
    random_state=0,
).fit(X, y)
# Only the data owner can check the pick's true score: it is not part of the released results.
true = cross_val_score(private.best_estimator_, X, y, cv=args.cv).mean()
print("private:", private.best_params_, "true CV accuracy", round(true, 4))
print("privacy:", private.privacy_report_)
plot_searches(exact, private, true, args.out / "search_random_forest.png")
