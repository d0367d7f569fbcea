"""Tune a random forest on breast_cancer with privtune, next to the untuned forest.

Two searches of 30 candidates each: one on exact cross-validated accuracies, one where each
candidate's accuracy is released with epsilon-LDP (clipped to [0, 1], plus Laplace noise of
scale 1 / epsilon) and the search sees, stores and picks from released values only.

    python examples/quickstart.py            # about a minute on two cores
    python examples/quickstart.py --quick    # a smoke run of a few seconds
"""

import sys

from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import StratifiedKFold, cross_val_score

from privtune import PrivateBOSearchCV

quick = "--quick" in sys.argv
X, y = load_breast_cancer(return_X_y=True)
folds = StratifiedKFold(3 if quick else 5, shuffle=True, random_state=0)
forest = RandomForestClassifier(random_state=0)
# The forest's own values (100, 1, "sqrt", "gini") lie in the space: each search evaluates
# them first, so the untuned forest is among the candidates it picks from.
space = {
    "n_estimators": (20, 200),
    "min_samples_leaf": (1, 20),
    "max_features": ["sqrt", "log2", None],
    "criterion": ["gini", "entropy"],
}
settings = dict(n_iter=6 if quick else 30, cv=folds, n_jobs=2, random_state=0, verbose=1)

default = cross_val_score(forest, X, y, cv=folds).mean()
exact = PrivateBOSearchCV(forest, space, **settings).fit(X, y)
private = PrivateBOSearchCV(forest, space, epsilon=10.0, **settings).fit(X, y)
# Only the data owner can measure the private pick's true accuracy; the search never saw it.
private_true = cross_val_score(private.best_estimator_, X, y, cv=folds).mean()

print(f"\nuntuned forest                  CV accuracy {default:.4f}")
print(f"tuned on exact scores           CV accuracy {exact.best_score_:.4f}")
print(f"tuned on scores at epsilon = 10 CV accuracy {private_true:.4f}")
print("  its parameters:", private.best_params_)
report = private.privacy_report_
print(
    f"  privacy: {report['n_reports']} reports of epsilon {report['epsilon_per_report']:g}, "
    f"composed epsilon {report['composed_epsilon_pld']:.1f} at delta {report['delta']:g}"
)
