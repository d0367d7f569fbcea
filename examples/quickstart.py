"""Tune k-nearest neighbours without seeing a raw score, at a total epsilon of 1 that protects
each validation record, next to the untuned model.

9,000 records of a three-class problem. The search holds out 70 % of its data as a validation
set and releases each candidate's accuracy on it with Laplace noise scaled to one record's
share of the score (1 / n_val): the whole search is (1, 1e-6)-differentially private for each
validation record. Every model is then scored on a fresh test set that no search saw.

    python examples/quickstart.py            # about a minute
    python examples/quickstart.py --quick    # a smoke run of a few seconds
"""

import sys

from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from privtune import PrivateBOSearchCV

quick = "--quick" in sys.argv
X, y = make_classification(
    1500 if quick else 9000,
    20,
    n_informative=8,
    n_redundant=4,
    n_classes=3,
    flip_y=0.03,
    class_sep=0.8,
    random_state=0,
)
X_tune, X_test, y_tune, y_test = train_test_split(X, y, test_size=0.2, stratify=y, random_state=0)

knn = make_pipeline(StandardScaler(), KNeighborsClassifier())  # k = 5, uniform weights
space = {
    "kneighborsclassifier__n_neighbors": (1, 100, "log-uniform"),
    "kneighborsclassifier__weights": ["uniform", "distance"],
}
settings = dict(n_iter=6 if quick else 20, validation_fraction=0.7, random_state=0, verbose=1)

untuned = knn.fit(X_tune, y_tune).score(X_test, y_test)
print("exact scores (no privacy):", flush=True)
exact = PrivateBOSearchCV(knn, space, privacy_unit="record", **settings).fit(X_tune, y_tune)
print("released scores (total epsilon 1 for each validation record):", flush=True)
private = PrivateBOSearchCV(
    knn, space, privacy_unit="record", privacy_budget=(1.0, 1e-6), **settings
).fit(X_tune, y_tune)

print(f"\nuntuned k-NN                      test accuracy {untuned:.4f}")
print(f"tuned on exact scores             test accuracy {exact.score(X_test, y_test):.4f}")
print(f"tuned on released scores          test accuracy {private.score(X_test, y_test):.4f}")
print("  its parameters:", private.best_params_)
print("  what the epsilon protects:", private.privacy_report_["protects"])
