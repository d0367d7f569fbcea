"""Tune an MLP (in a pipeline) on breast_cancer with PrivateBOSearchCV, without and with privacy.

    python examples/search_mlp.py [--n-iter 40] [--cv 5] [--out DIR] [--quick]

The space is the GO-UCB paper's (App. D.2, ``privtune.presets``), addressed to the pipeline's
``mlpclassifier`` step. Saves ``search_mlp.png``.
"""

import warnings

from _search_example import options, plot_searches
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import cross_val_score
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from privtune import PrivateBOSearchCV
from privtune.presets import mlp_space

args = options(__doc__)
X, y = load_breast_cancer(return_X_y=True)
pipe = make_pipeline(StandardScaler(), MLPClassifier(random_state=0))
space = {f"mlpclassifier__{name}": dim for name, dim in mlp_space().items()}
warnings.filterwarnings("ignore", category=ConvergenceWarning)  # small max_iter is in the space

exact = PrivateBOSearchCV(
    pipe, space, algorithm="gp-ucb", n_iter=args.n_iter, cv=args.cv, random_state=0
).fit(X, y)
print("non-private: CV accuracy", round(exact.best_score_, 4))

private = PrivateBOSearchCV(
    pipe, space, algorithm="tgp", epsilon=2.0, n_iter=args.n_iter, cv=args.cv, random_state=0
).fit(X, y)
true = cross_val_score(private.best_estimator_, X, y, cv=args.cv).mean()
print("private: true CV accuracy of the pick", round(true, 4))
print("privacy:", private.privacy_report_)
plot_searches(exact, private, true, args.out / "search_mlp.png")
