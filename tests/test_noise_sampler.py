"""OpenDP's vetted samplers behind the curators (the ``opendp`` extra, part of ``dev``)."""

from __future__ import annotations

import math

import numpy as np
import optuna
import pytest
from sklearn.linear_model import LogisticRegression

from privtune import PrivateBOSearchCV, PrivateGPUCBSampler
from privtune.privacy import (
    GaussianCurator,
    LaplaceCurator,
    get_noise_sampler,
    private_selection,
    set_noise_sampler,
)

pytest.importorskip("opendp")


@pytest.fixture
def opendp():
    previous = set_noise_sampler("opendp")
    try:
        yield
    finally:
        set_noise_sampler(previous)


def test_by_default_unseeded_releases_use_opendp_and_seeded_ones_numpy():
    from privtune.privacy.noise import resolve

    assert get_noise_sampler() == "auto"
    assert resolve("auto", seeded=False) == "opendp"  # installed with dev
    assert resolve("auto", seeded=True) == "numpy"  # an experiment: reproducible
    # a seeded curator draws from its numpy generator, an unseeded one does not touch numpy's
    seeded = LaplaceCurator(1.0, (0.0, 1.0), seed=0)
    assert seeded.privatize(0.5) == LaplaceCurator(1.0, (0.0, 1.0), seed=0).privatize(0.5)
    unseeded = LaplaceCurator(1.0, (0.0, 1.0))
    state = unseeded.rng.bit_generator.state
    unseeded.privatize(0.5)
    assert unseeded.rng.bit_generator.state == state
    with pytest.raises(ValueError, match="name must be one of"):
        set_noise_sampler("secrets")


def test_numpy_can_be_chosen_for_every_release():
    previous = set_noise_sampler("numpy")
    try:
        c = LaplaceCurator(1.0, (0.0, 1.0))
        state = c.rng.bit_generator.state
        c.privatize(0.5)
        assert c.rng.bit_generator.state != state
    finally:
        set_noise_sampler(previous)


def test_opendp_laplace_noise_has_the_curators_scale(opendp):
    # 20 000 draws (OpenDP's sampler cannot be seeded: the tolerance is five standard errors,
    # which a correct sampler exceeds with probability below 1e-6)
    c = LaplaceCurator(epsilon=2.0, value_range=(0.0, 1.0))
    assert c.sampler == "opendp"
    noise = c.privatize(np.full(20_000, 0.5)) - 0.5
    assert abs(np.mean(np.abs(noise)) - c.scale) < 5 * c.scale / math.sqrt(noise.size)
    assert abs(np.mean(noise)) < 5 * math.sqrt(2) * c.scale / math.sqrt(noise.size)
    assert c.ledger.n_reports == 20_000


def test_opendp_outputs_of_the_two_extreme_inputs_stay_within_e_to_the_epsilon(opendp):
    # as for numpy's sampler (test_privacy.py), on 2 x 20 000 draws: bins with >= 500 draws
    # in each, five standard errors (about 0.063 each) of slack
    epsilon, lo, hi, n = 1.0, 0.0, 1.0, 20_000
    a = LaplaceCurator(epsilon, (lo, hi)).privatize(np.full(n, lo))
    b = LaplaceCurator(epsilon, (lo, hi)).privatize(np.full(n, hi))
    edges = np.linspace(lo - 4.0, hi + 4.0, 41)
    ca, _ = np.histogram(a, edges)
    cb, _ = np.histogram(b, edges)
    ok = (ca >= 500) & (cb >= 500)
    assert ok.sum() >= 6
    se = np.sqrt(1 / ca[ok] + 1 / cb[ok])
    assert np.all(np.abs(np.log(ca[ok] / cb[ok])) <= epsilon + 5 * se)


def test_opendp_gaussian_noise_has_the_curators_standard_deviation(opendp):
    c = GaussianCurator(2.0, (0.0, 1.0), epsilon=1.0, delta=0.1)
    noise = c.privatize(np.full(20_000, 0.5)) - 0.5
    # the sample standard deviation's standard error is about sd / sqrt(2 n)
    assert abs(np.std(noise) - c.scale) < 5 * c.scale / math.sqrt(2 * noise.size)


def test_a_clipped_score_is_released_through_opendp_too(opendp):
    c = LaplaceCurator(1e6, (0.0, 1.0))  # noise of scale 1e-6
    assert c.privatize(7.0) == pytest.approx(1.0, abs=1e-4)
    assert isinstance(c.privatize(0.3), float)


def test_noise_seeds_are_refused_with_opendp(opendp):
    with pytest.raises(ValueError, match="cannot be seeded"):
        LaplaceCurator(1.0, (0.0, 1.0)).privatize(0.5, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="noise_seed=0 seeds the privacy noise"):
        PrivateGPUCBSampler(epsilon=1.0, value_range=(0.0, 1.0), noise_seed=0)
    with pytest.raises(ValueError, match="noise_random_state=0 seeds the privacy noise"):
        PrivateBOSearchCV(
            LogisticRegression(), {"C": (0.1, 1.0)}, epsilon=1.0, noise_random_state=0
        ).fit(np.zeros((4, 1)), [0, 1, 0, 1])
    with pytest.raises(ValueError, match="noise_seed=1 seeds the privacy noise"):
        private_selection(
            lambda c: 0.5, lambda rng: 0.0, value_range=(0, 1), mean=2, epsilon=1.0, noise_seed=1
        )


def test_a_study_runs_on_opendp_noise_and_its_receipts_verify(opendp):
    sampler = PrivateGPUCBSampler("random", epsilon=1.0, value_range=(0.0, 1.0), seed=0)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(sampler.privatize(lambda t: t.suggest_float("x", 0, 1)), n_trials=5)
    assert sampler.privacy_report(study)["n_reports"] == 5
    sampler.recommend(study)
