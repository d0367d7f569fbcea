"""Tune gradient boosting on breast_cancer with PrivateBOSearchCV: the untuned model, a search
on exact scores and a private search (each candidate's score released with epsilon-LDP).

    python examples/search_gradient_boosting.py [--n-iter 30] [--cv 5] [--out DIR] [--quick]

About half a minute on two cores (``--quick``: a few seconds). The space is the GO-UCB paper's
(App. D.2, ``privtune.presets``) without ``criterion``, which scikit-learn 1.9 deprecated.
Saves ``search_gradient_boosting.png`` under ``examples/results``.
"""

from _search_example import cv_score, options, plot_searches, report
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import GradientBoostingClassifier

from privtune import PrivateBOSearchCV
from privtune.presets import gradient_boosting_space

args = options(__doc__, n_iter=20)
X, y = load_breast_cancer(return_X_y=True)
boosting = GradientBoostingClassifier(random_state=0)
space = gradient_boosting_space(include_criterion=False)
default = cv_score(boosting, X, y, args.folds)
common = dict(n_iter=args.n_iter, cv=args.folds, n_jobs=2, random_state=0, verbose=1)

exact = PrivateBOSearchCV(boosting, space, **common).fit(X, y)
# Accuracy lies in [0, 1], a range scikit-learn fixes: value_range may be left out.
private = PrivateBOSearchCV(boosting, space, epsilon=10.0, **common).fit(X, y)
true = cv_score(private.best_estimator_, X, y, args.folds)
report(default, exact, private, true)
plot_searches(
    default,
    exact,
    private,
    true,
    args.out / "search_gradient_boosting.png",
    "Gradient boosting on breast_cancer: untuned, tuned, tuned privately",
)
