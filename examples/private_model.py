"""Tune a differentially private random forest of IBM's diffprivlib so that every record of the
data is protected, training and validation, by one total: epsilon 3.

diffprivlib's RandomForestClassifier is differentially private per fit once the range of each
feature and the classes are given before the data is read (``bounds``, ``classes``: diffprivlib
clips the features to the bounds; taken from the data they would break the guarantee, and
diffprivlib warns then). 12,000 records of a two-class problem with clustered classes: a test
set of 2,400 that no search sees, and 9,600 for the search, which holds out 1,920 as its
validation set.

``estimator_epsilon="auto"`` asks for nothing but the total every record gets. The search sets
the forest's own epsilon: the budget goes to a private selection among about 20 forests (depth
and number of trees drawn from the space, the untuned forest among them), each fitted at the
per-candidate epsilon (about a third of the total) on the training records and scored on the
validation records; the pick's own forest is the one deployed, no refit. The untuned forest is
shown fitted once at epsilon 3, the whole budget on one fit: what tuning buys is the depth the
defaults lack.

Needs diffprivlib, which needs scikit-learn below 1.8: ``pip install -e ".[diffprivlib]"``.

    python examples/private_model.py            # about 10 to 40 seconds
    python examples/private_model.py --quick    # a smoke run of a few seconds
"""

import sys

from diffprivlib.models import RandomForestClassifier
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split

from privtune import PrivateBOSearchCV

TOTAL = (3.0, 1e-6)  # (epsilon, delta) for every record of the data

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
public = dict(bounds=(-4.0, 4.0), classes=[0, 1], random_state=0)
forest = RandomForestClassifier(**public)  # 10 trees of depth 5; its epsilon is set below
space = {"max_depth": (3, 12), "n_estimators": (10, 50)}

whole = RandomForestClassifier(epsilon=TOTAL[0], **public).fit(X_tune, y_tune)
print("a private selection among privately trained forests, every record protected:")
search = PrivateBOSearchCV(
    forest,
    space,
    privacy_unit="record",  # 20 % of the records held out for the selection
    privacy_budget=TOTAL,  # what every record gets, training and validation
    estimator_epsilon="auto",  # the search sets the forest's own epsilon
    n_iter=4 if quick else 20,  # the mean number of candidates; the cost does not grow
    random_state=0,
    verbose=1,
).fit(X_tune, y_tune)
report = search.privacy_report_

print(
    f"\nuntuned forest, epsilon {TOTAL[0]:g} in one fit   "
    f"test accuracy {whole.score(X_test, y_test):.4f}"
)
tuned = search.score(X_test, y_test)
print(f"tuned forest, epsilon {TOTAL[0]:g} in all        test accuracy {tuned:.4f}")
print("  its parameters:", search.best_params_)
print(f"  the guarantee: {report['protects']} (each candidate's fit {report['fit_epsilon']:.3g})")
