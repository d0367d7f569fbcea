"""Tune k-nearest neighbours at a total epsilon of 1 that protects each of 500 validation
records, next to the untuned model and to tuning without privacy.

3,125 records of a three-class problem: a fresh test set of 625 that no search sees, and 2,500
for the search, which holds out 500 as its validation set and trains on the other 2,000. The
private search proposes up to 20 candidates (repeats dropped) by Bayesian optimization on the
training records alone (exact scores: the record unit protects the validation records, not
those), then makes one private choice among the untuned model and them on the validation
records, among those that score at least as well as the untuned model on the training records
(permute-and-flip, epsilon 1 spent once): the search is 1-differentially private for each
validation record.

    python examples/quickstart.py            # about 10 seconds on two cores
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
    1500 if quick else 3125,
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
settings = dict(n_iter=6 if quick else 20, random_state=0, verbose=1)  # 20 % held out

untuned = knn.fit(X_tune, y_tune).score(X_test, y_test)
print("exact scores (no privacy):", flush=True)
exact = PrivateBOSearchCV(knn, space, **settings).fit(X_tune, y_tune)  # 5-fold cross-validation
print("a private choice (total epsilon 1 for each validation record):", flush=True)
private = PrivateBOSearchCV(
    knn, space, privacy_unit="record", privacy_budget=(1.0, 1e-6), **settings
).fit(X_tune, y_tune)

print(f"\nuntuned k-NN                      test accuracy {untuned:.4f}")
print(f"tuned on exact scores             test accuracy {exact.score(X_test, y_test):.4f}")
print(f"tuned privately                   test accuracy {private.score(X_test, y_test):.4f}")
print("  its parameters:", private.best_params_)
print("  what the epsilon protects:", private.privacy_report_["protects"])
