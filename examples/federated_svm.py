"""Federated tuning: 10 parties tune one RBF SVM, each on its own shard, with DP-FTS-DE.

Each party detects its own digit in its shard of scikit-learn's handwritten digits and scores
the SVM by validation AUC. Only the parties' posterior samples reach the server, and its
broadcasts are (epsilon, delta) user-level DP in each party's contribution. Each party's
recommendation is compared with the untuned SVM by 3-fold cross-validated AUC on its shard.

    python examples/federated_svm.py            # about 10 seconds
    python examples/federated_svm.py --quick    # a smoke run of a few seconds
"""

import sys

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from privtune.federated import FederatedSearch
from privtune.privacy.units import describe_guarantee

X, digit = load_digits(return_X_y=True)
order = np.random.default_rng(0).permutation(len(digit))
parties = [(X[order[n::10]], (digit[order[n::10]] == n).astype(int)) for n in range(10)]

search = FederatedSearch(
    make_pipeline(StandardScaler(), SVC()),
    {"svc__gamma": (0.01, 10.0, "log-uniform"), "svc__C": (1e-4, 10.0, "log-uniform")},
    n_iter=3 if "--quick" in sys.argv else 20,  # rounds after each party's 10 initial ones
    q=0.5,  # each party is selected by the server with probability q per round
    z=1.0,  # noise multiplier of the server's Gaussian mechanism
    P=2,  # sub-regions of distributed exploration
    scoring="roc_auc",
    random_state=0,
).fit(parties)

print(
    "privacy loss of the broadcasts:",
    describe_guarantee(
        "each party's whole participation (user-level DP)", search.epsilon_, search.delta_
    ),
)
untuned = make_pipeline(StandardScaler(), SVC())
for n, ((X_n, y_n), params) in enumerate(zip(parties, search.recommended_params_, strict=True)):
    before = cross_val_score(untuned, X_n, y_n, cv=3, scoring="roc_auc").mean()
    tuned = make_pipeline(StandardScaler(), SVC()).set_params(**params)
    after = cross_val_score(tuned, X_n, y_n, cv=3, scoring="roc_auc").mean()
    print(
        f"party {n}: untuned SVM AUC {before:.4f}, recommended (gamma = "
        f"{params['svc__gamma']:.3g}, C = {params['svc__C']:.3g}) AUC {after:.4f}"
    )
