"""Tune a differentially private random forest of IBM's diffprivlib so that every record of the
data is protected, training and validation, at a total epsilon of 3.

diffprivlib's RandomForestClassifier is 0.25-differentially private per fit once the range of
each feature and the classes are given before the data is read (``bounds``, ``classes``:
diffprivlib clips the features to the bounds; taken from the data they would break the
guarantee, and diffprivlib warns then). 12,000 records of a two-class problem with clustered
classes: a test set of 2,400 that no search sees, and 9,600 for the search, which holds out
1,920 as its validation set. The search draws 10 forests (depth and number of trees), fits the
untuned forest and them on the training records, makes one private choice among the 11 on the
validation records (permute-and-flip, epsilon 2), and refits the pick on all 9,600. A training
record is in 12 fits (epsilon 12 x 0.25 = 3), a validation record in the choice and the refit
(epsilon 2.25): the search is 3-differentially private for every record. The untuned forest is
shown fitted once at epsilon 0.25 (the search's candidate 0) and at epsilon 3 (the whole
budget on one fit): what tuning buys is the depth the defaults lack, not less noise.

Needs diffprivlib, which needs scikit-learn below 1.8: ``pip install -e ".[diffprivlib]"``.

    python examples/private_model.py            # about 10 seconds
    python examples/private_model.py --quick    # a smoke run of a few seconds
"""

import sys

from diffprivlib.models import RandomForestClassifier
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

from privtune import PrivateBOSearchCV

EPS_FIT = 0.25  # each fit of a forest
EPS_CHOICE = 2.0  # the one private choice among the forests

quick = "--quick" in sys.argv
X, y = make_classification(
    3000 if quick else 12000,
    4,
    n_informative=4,
    n_redundant=0,
    n_clusters_per_class=3,
    random_state=0,
)
X_tune, X_test, y_tune, y_test = train_test_split(X, y, test_size=0.2, random_state=0)

# Fixed before the data is read: make_classification's features lie within (-4, 4) but for a
# few outliers, which diffprivlib clips to these bounds.
public = dict(bounds=(-4.0, 4.0), classes=[0, 1])
forest = RandomForestClassifier(epsilon=EPS_FIT, **public)  # 10 trees of depth 5
space = {"max_depth": (3, 12), "n_estimators": (10, 50)}

untuned = forest.fit(X_tune, y_tune).score(X_test, y_test)
print("a private choice among drawn forests, every record protected:", flush=True)
search = PrivateBOSearchCV(
    forest,
    space,
    privacy_unit="record",  # 20 % of the records held out for the choice
    privacy_budget=(EPS_CHOICE, 1e-6),
    estimator_epsilon=EPS_FIT,  # the forest's own guarantee per fit, for the training records
    n_iter=4 if quick else 10,
    random_state=0,
    verbose=1,
).fit(X_tune, y_tune)
total = search.privacy_report_["end_to_end"]
eps = total["epsilon"]
whole = RandomForestClassifier(epsilon=eps, **public).fit(X_tune, y_tune).score(X_test, y_test)
tuned = search.score(X_test, y_test)

print(f"\nuntuned forest, epsilon {EPS_FIT:<4g} in one fit   test accuracy {untuned:.4f}")
print(f"untuned forest, epsilon {eps:<4g} in one fit   test accuracy {whole:.4f}")
print(f"tuned forest, epsilon {eps:<4g} end to end   test accuracy {tuned:.4f}")
print("  its parameters:", search.best_params_)
print("  what the epsilon protects:", search.privacy_report_["protects"])
print(
    f"  end to end: epsilon {total['training_epsilon']:g} for a training record (the fits), "
    f"{total['validation_epsilon']:g} for a validation record (the choice and the refit)"
)
