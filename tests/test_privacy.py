import math
import warnings

import dp_accounting
import numpy as np
import pytest

from privtune.privacy import GaussianCurator, LaplaceCurator, PrivacyLedger


def test_noise_scale_is_range_over_epsilon():
    c = LaplaceCurator(epsilon=0.5, value_range=(-2.0, 3.0))
    assert c.scale == pytest.approx(10.0)
    assert c.sensitivity == pytest.approx(5.0)
    # Zhou & Tan's CTL(eps): scale 2 (B + R) / eps with rewards in [-(B+R), B+R].
    B, R, eps = 2.5, 1.0, 1.0
    assert LaplaceCurator(eps, (-(B + R), B + R)).scale == pytest.approx(2 * (B + R) / eps)


def test_empirical_noise_matches_the_laplace_scale():
    c = LaplaceCurator(epsilon=2.0, value_range=(0.0, 1.0), seed=0)
    noise = c.privatize(np.full(200_000, 0.5)) - 0.5
    # E|L| = scale for Laplace(scale); the standard error of the mean of |L| is scale/sqrt(n).
    assert abs(np.mean(np.abs(noise)) - c.scale) < 5 * c.scale / math.sqrt(noise.size)
    assert abs(np.mean(noise)) < 5 * math.sqrt(2) * c.scale / math.sqrt(noise.size)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_outputs_of_the_two_extreme_inputs_stay_within_e_to_the_epsilon(epsilon):
    # The densities of privatize(lo) and privatize(hi) differ by a factor of at most e^eps.
    # Empirical check on 2 x 250k draws: histogram both, keep bins with >= 2000 draws in each,
    # and compare log count ratios with eps. Each bin's log-ratio has standard error about
    # sqrt(1/n1 + 1/n2) <= 0.032, so we allow 5 of those above eps. The mechanism should also
    # be tight: outside [lo, hi] the ratio equals e^eps, so the maximum must come close to eps.
    lo, hi, n = 0.0, 1.0, 250_000
    a = LaplaceCurator(epsilon, (lo, hi), seed=1).privatize(np.full(n, lo))
    b = LaplaceCurator(epsilon, (lo, hi), seed=2).privatize(np.full(n, hi))
    scale = (hi - lo) / epsilon
    edges = np.linspace(lo - 4 * scale, hi + 4 * scale, 81)
    ca, _ = np.histogram(a, edges)
    cb, _ = np.histogram(b, edges)
    ok = (ca >= 2000) & (cb >= 2000)
    assert ok.sum() >= 10
    log_ratio = np.abs(np.log(ca[ok] / cb[ok]))
    se = np.sqrt(1 / ca[ok] + 1 / cb[ok])
    assert np.all(log_ratio <= epsilon + 5 * se)
    assert log_ratio.max() >= epsilon - 5 * se.max()


def test_clipping_is_silent():
    # whether a score left the range is a fact about the raw score: no warning may tell it
    c = LaplaceCurator(1.0, (0.0, 1.0), seed=0)
    secret = 1234.5678
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c.privatize(secret)
        c.privatize(-secret)
        c.privatize(0.5)
    assert caught == []


def test_clipped_scores_are_privatized_from_the_bound():
    c1 = LaplaceCurator(1.0, (0.0, 1.0), seed=5)
    c2 = LaplaceCurator(1.0, (0.0, 1.0), seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert c1.privatize(50.0) == c2.privatize(1.0)


def test_seeded_curator_is_reproducible():
    a = LaplaceCurator(1.0, (0, 1), seed=42).privatize([0.1, 0.2])
    b = LaplaceCurator(1.0, (0, 1), seed=42).privatize([0.1, 0.2])
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), None, "1"])
def test_bad_epsilon_is_rejected(bad):
    with pytest.raises((ValueError, TypeError), match="epsilon"):
        LaplaceCurator(bad, (0.0, 1.0))


@pytest.mark.parametrize("bad", [(1.0, 1.0), (2.0, 1.0), (0.0, float("inf")), (0.0,), None, "ab"])
def test_bad_value_range_is_rejected(bad):
    with pytest.raises(ValueError, match="value_range"):
        LaplaceCurator(1.0, bad)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_scores_are_refused(bad):
    c = LaplaceCurator(1.0, (0.0, 1.0))
    with pytest.raises(ValueError, match="non-finite"):
        c.privatize(bad)
    assert c.ledger.n_reports == 0


def test_ledger_records_every_report_and_composes():
    c = LaplaceCurator(0.1, (0.0, 1.0), seed=0)
    c.privatize(np.full(200, 0.5))
    ledger = c.ledger
    assert ledger.n_reports == 200
    assert ledger.epsilon_per_report == pytest.approx(0.1)
    assert ledger.composed_epsilon("basic") == pytest.approx(20.0)
    adv = ledger.composed_epsilon("advanced", delta=1e-6)
    pld = ledger.composed_epsilon("pld", delta=1e-6)
    # Advanced composition beats basic for many small-epsilon reports, and the PLD
    # accountant is tighter still (up to its discretisation).
    assert adv < 20.0
    assert pld <= adv * 1.01


def test_pld_of_single_reports_equals_the_self_composed_event():
    # 60 reports recorded one at a time (one per trial) and two of another epsilon: the
    # ledger's PLD answer is dp-accounting's for the composition of both groups.
    ledger = PrivacyLedger()
    for _ in range(60):
        ledger.record_laplace(10.0)
    ledger.record_laplace(1.0, count=2)
    acc = dp_accounting.pld.PLDAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    )
    acc.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(1.0), 2))
    acc.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(0.1), 60))
    assert ledger.composed_epsilon("pld", delta=1e-6) == pytest.approx(
        acc.get_epsilon(1e-6), rel=1e-9
    )


def test_advanced_composition_falls_back_when_the_exact_sum_overflows():
    ledger = PrivacyLedger()
    for _ in range(1000):
        ledger.record_laplace(1.0)
    eps = ledger.composed_epsilon("advanced", delta=1e-5)
    assert math.isfinite(eps) and eps <= 1000.0
    # a per-report epsilon whose e^epsilon overflows too: basic composition
    ledger = PrivacyLedger()
    for _ in range(3):
        ledger.record_laplace(1000.0)
    assert ledger.composed_epsilon("advanced", delta=1e-6) == 3000.0


def test_ledger_composes_per_owner():
    ledger = PrivacyLedger()
    for _ in range(3):
        ledger.record_laplace(1.0, owner="a")
    ledger.record_laplace(1.0, owner="b")
    assert ledger.composed_epsilon("basic") == 3.0  # worst owner by default
    assert ledger.composed_epsilon("basic", owner="b") == 1.0
    with pytest.raises(ValueError, match="delta"):
        ledger.composed_epsilon("advanced", delta=0.0)
    with pytest.raises(ValueError, match="method"):
        ledger.composed_epsilon("fancy")


# -- the Gaussian curator (the client's release of local joint DP) ---------------------------------
def test_gaussian_noise_has_the_declared_standard_deviation():
    c = GaussianCurator(1.5, (0.0, 2.0), epsilon=1.0, delta=0.1, seed=0)
    assert c.scale == pytest.approx(3.0)  # noise_multiplier * (hi - lo)
    noise = c.privatize(np.full(100_000, 1.0)) - 1.0
    # The sample standard deviation's standard error is about scale / sqrt(2 n): 5 of them.
    assert abs(noise.std() - c.scale) < 5 * c.scale / math.sqrt(2 * noise.size)
    assert abs(noise.mean()) < 5 * c.scale / math.sqrt(noise.size)
    assert c.ledger.n_reports == 100_000


def test_gaussian_curator_clips_before_the_noise_silently():
    c = GaussianCurator(1e-9, (0.0, 1.0), epsilon=1.0, delta=0.1, seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert c.privatize(7.25) == pytest.approx(1.0, abs=1e-8)
        assert c.privatize(-3.5) == pytest.approx(0.0, abs=1e-8)
    assert caught == []


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"noise_multiplier": 0.0}, "noise_multiplier"),
        ({"delta": 1.0}, "delta"),
        ({"epsilon": -1.0}, "epsilon"),
    ],
)
def test_gaussian_curator_names_its_bad_arguments(kwargs, match):
    args = {"noise_multiplier": 1.0, "value_range": (0, 1), "epsilon": 1.0, "delta": 0.1, **kwargs}
    with pytest.raises(ValueError, match=match):
        GaussianCurator(**args)


def test_gaussian_reports_compose_through_dp_accounting():
    ledger = PrivacyLedger()
    c = GaussianCurator(2.0, (0.0, 1.0), epsilon=1.0, delta=0.05, ledger=ledger, seed=0)
    c.privatize(np.full(30, 0.5))
    acc = dp_accounting.pld.PLDAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    )
    acc.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(2.0), 30))
    assert ledger.composed_epsilon("pld", 1e-6) == pytest.approx(acc.get_epsilon(1e-6))
    summary = ledger.summary(1e-6)
    assert summary["epsilon_per_report"] == 1.0 and summary["delta_per_report"] == 0.05
    assert summary["composed_epsilon_basic"] == pytest.approx(30.0)
    assert summary["composed_delta_basic"] == pytest.approx(1.5)
    assert "composed_epsilon_advanced" not in summary  # pure-DP reports only
    with pytest.raises(ValueError, match="pld"):
        ledger.composed_epsilon("advanced", 1e-6)


def test_mixed_laplace_and_gaussian_reports_compose_as_one_accountant():
    ledger = PrivacyLedger()
    ledger.record_laplace(1.0, count=3)
    ledger.record_gaussian(2.0, 1.0, 0.1, count=2)
    acc = dp_accounting.pld.PLDAccountant(
        neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    )
    acc.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(2.0), 2))
    acc.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(1.0), 3))
    assert ledger.composed_epsilon("pld", 1e-5) == pytest.approx(acc.get_epsilon(1e-5))
