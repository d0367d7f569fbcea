"""Tune gradient boosting on breast_cancer with PrivateBOSearchCV, without and with privacy.

    python examples/search_gradient_boosting.py [--n-iter 40] [--cv 5] [--out DIR] [--quick]

The space is the GO-UCB paper's (App. D.2, ``privtune.presets``) without ``criterion``, which
scikit-learn 1.9 deprecated. The cross-validation fits run on two workers (``n_jobs=2``).
Saves ``search_gradient_boosting.png``.
"""

from _search_example import options, plot_searches
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.model_selection import cross_val_score

from privtune import PrivateBOSearchCV
from privtune.presets import gradient_boosting_space

args = options(__doc__)
X, y = load_breast_cancer(return_X_y=True)
boosting = GradientBoostingClassifier(random_state=0)
space = gradient_boosting_space(include_criterion=False)

exact = PrivateBOSearchCV(
    boosting,
    space,
    algorithm="gp-ucb",
    n_iter=args.n_iter,
    cv=args.cv,
    n_jobs=2,
    random_state=0,
).fit(X, y)
print("non-private:", exact.best_params_, "CV accuracy", round(exact.best_score_, 4))

# Privacy and a known score range: accuracy lies in [0, 1], so value_range may be left out.
private = PrivateBOSearchCV(
    boosting,
    space,
    algorithm="moma",
    epsilon=2.0,
    n_iter=args.n_iter,
    cv=args.cv,
    n_jobs=2,
    random_state=0,
).fit(X, y)
true = cross_val_score(private.best_estimator_, X, y, cv=args.cv).mean()
print("private: true CV accuracy of the pick", round(true, 4))
print("privacy:", private.privacy_report_)
plot_searches(exact, private, true, args.out / "search_gradient_boosting.png")
