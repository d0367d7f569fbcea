"""Tune an MLP (in a pipeline) on breast_cancer with PrivateBOSearchCV: the untuned MLP, a search
on exact scores and a private search (each candidate's score released with epsilon-LDP).

    python examples/search_mlp.py [--n-iter 30] [--cv 5] [--out DIR] [--quick]

About a minute on two cores (``--quick``: a few seconds). The space is the GO-UCB paper's
(App. D.2, ``privtune.presets``), addressed to the pipeline's ``mlpclassifier`` step. Saves
``search_mlp.png`` under ``examples/results``.
"""

import warnings

from _search_example import cv_score, options, plot_searches, report
from sklearn.datasets import load_breast_cancer
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from privtune import PrivateBOSearchCV
from privtune.presets import mlp_space

args = options(__doc__)
warnings.filterwarnings("ignore", category=ConvergenceWarning)  # small max_iter is in the space
X, y = load_breast_cancer(return_X_y=True)
pipe = make_pipeline(StandardScaler(), MLPClassifier(random_state=0))
space = {f"mlpclassifier__{name}": dim for name, dim in mlp_space().items()}
default = cv_score(pipe, X, y, args.folds)
common = dict(n_iter=args.n_iter, cv=args.folds, n_jobs=2, random_state=0, verbose=1)

exact = PrivateBOSearchCV(pipe, space, **common).fit(X, y)
private = PrivateBOSearchCV(pipe, space, epsilon=10.0, **common).fit(X, y)
true = cv_score(private.best_estimator_, X, y, args.folds)
report(default, exact, private, true)
plot_searches(
    default,
    exact,
    private,
    true,
    args.out / "search_mlp.png",
    "An MLP on breast_cancer: untuned, tuned, tuned privately",
)
