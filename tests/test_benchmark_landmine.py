"""The landmine experiment of Dai, Low & Jaillet (2021) in ``benchmarks/dai.py``."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np


def test_landmine_fields_and_their_stratified_halves():
    from benchmarks import dai

    fields = dai.landmine_fields()
    assert len(fields) == 29
    assert sum(len(y) for _, y in fields) == 14820 and sum(int(y.sum()) for _, y in fields) == 904
    for X, y in fields:
        assert X.shape == (y.size, 9) and 445 <= y.size <= 690
        assert X.dtype == np.float64 and np.all(np.isfinite(X))
        assert set(np.unique(y).tolist()) == {0, 1}
        X_train, X_val, y_train, y_val = dai.landmine_split(X, y)
        assert abs(y_train.size - y_val.size) <= 1 and X_train.shape == (y_train.size, 9)
        assert X_val.shape == (y_val.size, 9)
        # stratified: the landmines are shared between the halves up to one
        assert abs(int(y_train.sum()) - int(y_val.sum())) <= 1
        # a partition of the field's rows, the same every time (random_state=0)
        rows = np.vstack([X_train, X_val])
        assert np.array_equal(np.unique(rows, axis=0), np.unique(X, axis=0))
        assert np.array_equal(dai.landmine_split(X, y)[0], X_train)


def test_landmine_objective_maps_the_square_linearly():
    from benchmarks import dai

    assert dai.LandmineObjective.params(np.array([0.0, 1.0])) == {"C": 1e-4, "gamma": 10.0}
    mid = dai.LandmineObjective.params(np.array([0.5, 0.5]))
    assert math.isclose(mid["C"], (1e-4 + 10.0) / 2) and math.isclose(mid["gamma"], 5.005)
    X, y = dai.landmine_fields()[0]
    objective = dai.LandmineObjective(*dai.landmine_split(X, y))
    auc = objective(np.array([0.5, 0.1]))
    assert 0.5 < auc <= 1.0 and auc == objective(np.array([0.5, 0.1]))  # deterministic


def test_landmine_quick_mode_runs_every_setting_and_accounts_the_private_ones(tmp_path):
    from benchmarks import dai, harness

    out = dai.main(["--out", str(tmp_path), "--quick", "landmine"])
    quick = tmp_path / "quick"
    settings, features = {"random", "TS", "FTS-DE", "z=1"}, {"ours", "authors"}
    runs = harness.load_runs(harness.RunStore(quick, "dai_landmine"))
    # random search does not use the shared features: one run serves both choices
    assert len(runs) == (len(settings) - 1) * len(features) + 1
    saved = json.loads((quick / "dai_landmine.json").read_text())
    assert saved["summary"] == out["summary"]
    assert math.isclose(saved["delta"], 4**-1.1) and saved["delta_rule"] == "1/N^1.1"
    assert (quick / "dai_landmine.png").stat().st_size > 0
    assert set(out["summary"]) == features
    for name, (ls, lam) in dai.LANDMINE_FEATURES.items():
        assert out["features"][name] == {"M": 100, "lengthscale": ls, "lam": lam}
    assert out["summary"]["ours"]["random"] == out["summary"]["authors"]["random"]
    for entries in out["summary"].values():
        assert set(entries) == settings
        for name, entry in entries.items():
            curve = entry["mean"]
            assert len(curve) == 10 + 3 and entry["n_runs"] == 1 and entry["n_failed"] == 0
            assert all(0.0 <= v <= 1.0 for v in curve)
            assert all(b >= a for a, b in itertools.pairwise(curve))  # best so far
            assert entry["best_auc"] == curve[-1]
            assert ("epsilon" in entry) == (name == "z=1")
        eps = entries["z=1"]["epsilon"]
        assert eps["steps"] == 3 and entries["z=1"]["paper_epsilon"] == 15.17
        for key in ("tightest", "rdp", "pld"):
            assert 0.0 < eps[key] < math.inf
        assert math.isclose(eps["tightest"], min(eps["rdp"], eps["pld"]))
    for run in runs:
        assert len(run["final_per_agent"]) == run["N"] == 4
        assert all(0.0 <= v <= 1.0 for v in run["final_per_agent"])
        assert (run["epsilon"] is None) == (run["setting"] != "z=1")
    # resumable: a second call computes nothing and reads the same runs back
    assert dai.main(["--out", str(tmp_path), "--quick", "landmine"])["summary"] == out["summary"]
