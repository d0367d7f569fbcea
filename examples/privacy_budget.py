"""Plan a total privacy budget before touching the data, then tune a random forest within it.

1. ``plan_budget`` says, without any data, what a total (epsilon, delta) buys per number of
   candidates: each score's epsilon, its noise and the smallest difference between two
   configurations that the run can resolve, when every score is released and when only the
   pick is (private selection).
2. The forest is tuned within the budget both ways, next to the untuned forest; each pick's
   true CV accuracy is computed at the end, which only the data owner can do.

    python examples/privacy_budget.py [--epsilon 100] [--n-iter 20] [--quick]

About a minute on two cores (``--quick``: a few seconds).
"""

import argparse

from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import StratifiedKFold, cross_val_score

from privtune import PrivateBOSearchCV
from privtune.presets import random_forest_space
from privtune.privacy import plan_budget

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--epsilon", type=float, default=100.0, help="the total epsilon")
parser.add_argument("--n-iter", type=int, default=20, help="candidates per search")
parser.add_argument("--quick", action="store_true", help="4 candidates, 3 folds")
args = parser.parse_args()
n_iter, n_folds = (4, 3) if args.quick else (args.n_iter, 5)
budget = (args.epsilon, 1e-6)

# 1. Before any score exists: what the budget buys (accuracy lies in (0, 1)).
for mechanism in ("laplace", "selection"):
    plan = plan_budget(*budget, (0.0, 1.0), [10, 20, 40], mechanism)
    print(plan, end="\n\n")
worth = 0.05  # a difference in accuracy worth tuning for
for mechanism, label in (("laplace", "every score released"), ("selection", "pick only")):
    d = float(plan_budget(*budget, (0.0, 1.0), n_iter, mechanism).resolvable_difference[0])
    verdict = "can" if d <= worth else "cannot"
    print(f"{label:>21}: {n_iter} candidates resolve {d:.3f}; it {verdict} find a {worth} gain")
# The same budget with each of 5,000 validation records as the secret (privacy_unit="record",
# a hold-out split): the noise is 5,000 times smaller (see examples/quickstart.py).
print()
print(plan_budget(*budget, (0.0, 1.0), [10, 20, 40], n_val=5000), end="\n\n")

# 2. Tune within the budget, both ways.
X, y = load_breast_cancer(return_X_y=True)
folds = StratifiedKFold(n_folds, shuffle=True, random_state=0)
forest = RandomForestClassifier(random_state=0)
common = dict(privacy_budget=budget, n_iter=n_iter, cv=folds, n_jobs=2, random_state=0)
print("\nevery score released (per-score LDP):", flush=True)
scores = PrivateBOSearchCV(forest, random_forest_space(), verbose=1, **common).fit(X, y)
print("pick only (private selection):", flush=True)
best = PrivateBOSearchCV(forest, random_forest_space(), publish="best", verbose=1, **common)
best.fit(X, y)


def true_accuracy(estimator) -> float:
    """The pick's mean CV accuracy: computed by the data owner, never released."""
    return float(cross_val_score(estimator, X, y, cv=folds).mean())


spent_scores = scores.privacy_report_["spent_epsilon"]
spent_best = best.privacy_report_["epsilon"]
print()
print(f"untuned forest                  CV accuracy {true_accuracy(forest):.4f}")
print(
    f"every score released, pick      CV accuracy {true_accuracy(scores.best_estimator_):.4f}"
    f"  (epsilon {scores.epsilon_:.3g} per score, {spent_scores:.4g} of {budget[0]:g} spent)"
)
print(
    f"pick only, of {best.n_candidates_:>3} candidates     CV accuracy "
    f"{true_accuracy(best.best_estimator_):.4f}  (epsilon {best.epsilon_:.3g} per candidate, "
    f"{spent_best:.4g} of {budget[0]:g} spent)"
)
print("what each protects:", best.privacy_report_["protects"])
