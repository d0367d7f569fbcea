"""The environment of the authors' code for Dubey (2021) and its benchmark part."""

import itertools
import json
import math

import numpy as np
import pytest

from benchmarks import dubey, harness
from privtune.features import QuadratureFourierFeatures
from privtune.optimizers import QFFGPUCB


def test_environment_quick_mode_writes_every_setting(tmp_path):
    out = dubey.main(["environment", "--quick", "--out", str(tmp_path)])
    quick = tmp_path / "quick"
    saved = json.loads((quick / "dubey_environment.json").read_text())
    assert saved == json.loads(json.dumps(out))
    assert (quick / "dubey_environment.png").stat().st_size > 0
    store = harness.RunStore(quick, "dubey_environment")
    settings = {"random", "non-private_code", "alpha=1_theorem1"}
    assert {r["setting"] for r in harness.load_runs(store)} == settings
    assert not list(store.folder.glob("claims/*.claim"))
    config = saved["config"]
    assert (config["T"], config["d"], config["n"], config["m"]) == (100, 5, 10, 64)
    assert (config["lambda"], config["delta"], config["jdp_beta"]) == (100.0, 0.01, 0.1)
    assert config["jdp_alpha"]["alpha=100"] == 100.0
    assert set(saved["summary"]) == settings
    for entry in saved["summary"].values():
        curve = entry["mean"]
        assert entry["n_reps"] == 1 and entry["t"] == list(range(10, 101, 10))
        assert len(curve) == 10 and all(math.isfinite(c) for c in curve)
        assert curve[0] >= 0.0
        assert all(b >= a - 1e-12 for a, b in itertools.pairwise(curve))  # regret >= 0
        # each round's regret is below the range of f on the sphere, 1 - exp(-2)
        assert curve[-1] <= 100 * (1.0 - math.exp(-2.0))
        assert entry["final_mean"] == curve[-1]
    assert saved["summary"]["random"]["beta_scale"] is None
    assert saved["summary"]["non-private_code"]["beta_scale"] == 0.1
    assert saved["summary"]["alpha=1_theorem1"]["noise_std"] > 0.0
    # a second call finds the runs saved and computes nothing
    saved_runs = store.path.read_bytes()
    again = dubey.main(["--quick", "--out", str(tmp_path), "environment"])
    assert again["summary"] == out["summary"]
    assert store.path.read_bytes() == saved_runs


def test_sphere_environment_draws_the_notebooks_function_and_arms():
    env = dubey.SphereEnvironment(3)
    assert np.all(env.a >= 0.0) and math.isclose(env.a.sum(), 1.0)
    assert env.Z.shape == (4, 5) and np.allclose(np.linalg.norm(env.Z, axis=1), 1.0)
    sets = [env.decision_set() for _ in range(50)]
    for D in sets:
        assert D.shape == (10, 5)
        assert np.allclose(np.linalg.norm(D, axis=1), 1.0)
        assert D.min() >= 0.0 and D.max() <= 1.0  # inside the optimizer's unit cube
        v = env.f(D)
        assert np.all(v >= math.exp(-2.0) - 1e-12) and np.all(v <= 1.0)
    assert not np.allclose(sets[0], sets[1])  # a fresh set every round
    # f(z_j) >= a_j: the centre's own term is a_j exp(0)
    assert np.all(env.f(env.Z) >= env.a - 1e-12)
    noise = np.array([env.noise() for _ in range(4000)])
    assert abs(noise.mean()) < 0.1 and abs(noise.std() - 1.0) < 0.05


def test_sphere_environment_is_reproducible_per_repetition():
    a, b, c = (dubey.SphereEnvironment(r) for r in (7, 7, 8))
    assert np.array_equal(a.a, b.a) and np.array_equal(a.Z, b.Z)
    assert np.array_equal(a.decision_set(), b.decision_set())
    assert a.noise() == b.noise()
    assert not np.array_equal(a.Z, c.Z)
    # a run is a function of (setting, rep, T) except its seconds
    r1 = dubey.run_environment("alpha=1_theorem1-code", 2, T=30, every=5)
    r2 = dubey.run_environment("alpha=1_theorem1-code", 2, T=30, every=5)
    r1.pop("seconds"), r2.pop("seconds")
    assert r1 == r2


def test_environment_presents_one_decision_set_per_round(monkeypatch):
    sets, points = [], []

    class Recording(dubey.SphereEnvironment):
        def decision_set(self):
            sets.append(super().decision_set())
            return sets[-1]

    drive = harness.drive

    def recording_drive(*args, **kwargs):
        points.extend(drive(*args, **kwargs))
        return points

    monkeypatch.setattr(dubey, "SphereEnvironment", Recording)
    monkeypatch.setattr(dubey.harness, "drive", recording_drive)
    run = dubey.run_environment("non-private_code", 0, T=25, every=5)
    assert len(sets) == len(points) == 25
    for D, x in zip(sets, points, strict=True):
        assert np.any(np.all(D == x, axis=1))  # the played arm is one of that round's set
    assert run["t"] == [5, 10, 15, 20, 25] and len(run["cumulative_regret"]) == 5


def test_the_learners_kernel_is_the_environments():
    env = dubey.SphereEnvironment(0)
    X = np.vstack([env.decision_set() for _ in range(5)])
    q = QuadratureFourierFeatures(5, dubey.ENV_M_BAR, dubey.ENV_LENGTHSCALE)
    d2 = np.sum((X[:, None, :] - env.Z[None, :, :]) ** 2, axis=2)
    assert np.allclose(q.kernel(X, env.Z), np.exp(-d2))
    assert np.allclose(q.kernel(X, env.Z) @ env.a, env.f(X))
    assert q.n_features == 64


@pytest.mark.parametrize(
    ("setting", "scale", "cls"),
    [
        ("non-private_theorem1", 1.0, QFFGPUCB),
        ("alpha=0.5_theorem1-code", 0.01, QFFGPUCB),
        ("non-private_theorem1-code", 0.1, QFFGPUCB),
        ("alpha=100_theorem1-default", QFFGPUCB.default_beta_scale, QFFGPUCB),
        ("non-private_code", 0.1, dubey.CodeQFFGPUCB),
        ("alpha=10_code", 0.01, dubey.CodeQFFGPUCB),
    ],
)
def test_environment_learners_have_the_widths_of_their_setting(setting, scale, cls):
    opt = dubey.environment_learner(setting, 0, 5000)
    assert type(opt) is cls and opt.beta_scale == scale
    assert (opt.m, opt.lam, opt.zeta, opt.rho, opt.B) == (64, 100.0, 0.01, 1.0, 1.0)
    assert opt.privacy == (None if setting.startswith("non-private") else "jdp")
    if opt.privacy == "jdp":
        assert opt.alpha == dubey.ENV_PRIVACY[setting.split("_")[0]]
        assert opt.privacy_beta == 0.1 and opt.reward_bound is None
    if cls is dubey.CodeQFFGPUCB:
        # rho sqrt(m ln(1 + t B^2 / lam) - ln delta) + sqrt(lam) B, at t = 0 and t = 3
        assert math.isclose(opt.beta_t(), math.sqrt(-math.log(0.01)) + 10.0)
        opt.tell(np.full((3, 5), 0.2), np.zeros(3))
        assert math.isclose(opt.beta_t(), math.sqrt(64 * math.log(1.03) + math.log(100)) + 10.0)
