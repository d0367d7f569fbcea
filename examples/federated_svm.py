"""Federated tuning: 10 parties tune one RBF SVM, each on its own shard, with DP-FTS-DE.

Each party detects its own digit in its shard of scikit-learn's handwritten digits and scores
the SVM by validation AUC. Only the parties' posterior samples reach the server, and its
broadcasts are (epsilon, delta) user-level DP in each party's contribution.
"""

import numpy as np
from sklearn.datasets import load_digits
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from privtune.federated import FederatedSearch

X, digit = load_digits(return_X_y=True)
order = np.random.default_rng(0).permutation(len(digit))
parties = [(X[order[n::10]], (digit[order[n::10]] == n).astype(int)) for n in range(10)]

search = FederatedSearch(
    make_pipeline(StandardScaler(), SVC()),
    {"svc__gamma": (0.01, 10.0, "log-uniform"), "svc__C": (1e-4, 10.0, "log-uniform")},
    n_iter=20,  # rounds after each party's 10 initial evaluations
    q=0.5,  # each party is selected by the server with probability q per round
    z=1.0,  # noise multiplier of the server's Gaussian mechanism
    P=2,  # sub-regions of distributed exploration
    scoring="roc_auc",
    random_state=0,
).fit(parties)

print(
    f"privacy loss of the broadcasts: epsilon = {search.epsilon_:.2f} (delta = {search.delta_:.3g})"
)
pairs = zip(search.recommended_params_, search.best_params_, strict=True)
for n, (recommended, best) in enumerate(pairs):
    print(
        f"party {n}: recommended (best posterior mean) gamma = {recommended['svc__gamma']:.3g}, "
        f"C = {recommended['svc__C']:.3g}; best validation AUC {search.best_scores_[n]:.3f} "
        f"at gamma = {best['svc__gamma']:.3g}, C = {best['svc__C']:.3g}"
    )
