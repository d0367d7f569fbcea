"""Tune a random forest on breast_cancer with LDP-MoMA-GP-UCB: every score the optimizer sees
is clipped to a declared range and privatized by the Laplace curator (epsilon-LDP per report).

    python examples/quickstart.py
"""

from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import cross_val_score

from privtune import Categorical, Integer, LaplaceCurator, MoMAGPUCB, SearchSpace

X, y = load_breast_cancer(return_X_y=True)
space = SearchSpace(
    {
        "n_estimators": Integer(10, 60),
        "max_depth": Integer(1, 10),
        "criterion": Categorical(["gini", "entropy"]),
    }
)

# Scores are accuracies; we declare that they lie in [0.85, 1.0] (values outside are clipped).
lo, hi = 0.85, 1.0
curator = LaplaceCurator(epsilon=2.0, value_range=(lo, hi), seed=0)
# The optimizers expect centred rewards: map [lo, hi] to [-1, 1], so B + R = 1 in these units
# and the curator's noise scale (hi - lo) / epsilon becomes 2 / epsilon = 2 (B + R) / epsilon.
opt = MoMAGPUCB(space.dim, k=3, epsilon=2.0, B=0.5, R=0.5, snap=space.snap, seed=0)

for _ in range(24):
    u = opt.ask()
    params = space.from_unit(u)
    model = RandomForestClassifier(random_state=0, **params)
    score = cross_val_score(model, X, y, cv=3).mean()  # raw: stays with the data owner
    y_bar = curator.privatize(score)  # what leaves the data owner
    opt.tell(u, (2 * y_bar - lo - hi) / (hi - lo))

best = space.from_unit(opt.recommend())
print("recommended params:", best)
print(
    "its true 3-fold accuracy:",
    round(cross_val_score(RandomForestClassifier(random_state=0, **best), X, y, cv=3).mean(), 4),
)
print("privacy:", curator.ledger.summary(delta=1e-6))
print("noise scale of each report:", curator.scale, "| reports:", curator.ledger.n_reports)
