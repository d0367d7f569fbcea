"""The acquisition portfolio (``acquisition="portfolio"``): log EI, log PI or UCB per proposal."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from privtune.acquisition import (
    ACQUISITIONS,
    UCB,
    AcquisitionState,
    LogProbabilityOfImprovement,
    Portfolio,
    make_acquisition,
)
from privtune.cube import Block
from privtune.optimizers import GPUCB, QFFGPUCB


def _state(best: float) -> AcquisitionState:
    return AcquisitionState(
        beta=lambda: 2.0,
        best_observed=lambda: best,
        best_mean=lambda: best,
        noise_sd=lambda: 0.0,
        exact=lambda: True,
    )


def test_log_pi_is_the_log_of_phi_and_finite_where_phi_underflows():
    mean = np.array([0.0, 1.0, -50.0])
    var = np.array([1.0, 4.0, 1.0])
    values = LogProbabilityOfImprovement()(mean, var, _state(0.5))
    expected = np.log(special.ndtr((mean[:2] - 0.5) / np.sqrt(var[:2])))
    np.testing.assert_allclose(values[:2], expected, rtol=1e-12)
    assert np.isfinite(values[2]) and values[2] < -1000


@pytest.mark.parametrize("z", [-3.0, -40.0, -3e8, -1e150])
def test_log_pis_gradient_is_exact_far_below_the_incumbent(z):
    """``d ln Phi(z) / dmean = phi(z) / (Phi(z) s)``: against ``phi / Phi`` computed directly
    at ``z = -3``, and below ``z = -40`` against the asymptotic series of the inverse Mills
    ratio, ``-z / (1 - 1/z^2 + 3/z^4 - 15/z^6)`` (its next term, ``105/z^8``, is below
    ``2e-11`` there: the tolerance); finite wherever ``z^2 / 2`` is a finite double."""
    sd = 1e-3
    value, d_mean, d_var = LogProbabilityOfImprovement().derivatives(z * sd, sd * sd, _state(0.0))
    if z == -3.0:
        mills, rel = math.exp(-4.5) / math.sqrt(2 * math.pi) / special.ndtr(-3.0), 1e-12
    else:
        w = 1.0 / z
        mills, rel = -z / (1.0 - w**2 + 3.0 * w**4 - 15.0 * w**6), 1e-10
    assert d_mean * sd == pytest.approx(mills, rel=rel)
    assert math.isfinite(value) and math.isfinite(d_var) and d_var > 0


def test_log_pis_variance_gradient_is_zero_below_the_variance_floor():
    """Below the floor the value does not move with the variance, nor does its gradient."""
    _, _, d_var = LogProbabilityOfImprovement().derivatives(-0.3, 1e-20, _state(0.0))
    assert d_var == 0.0


@pytest.mark.parametrize("member", [0, 1, 2])
@pytest.mark.parametrize("mean, var", [(0.2, 0.3), (-3.0, 0.05), (1.5, 2.0)])
def test_each_members_derivatives_match_finite_differences(member, mean, var):
    """The analytic gradient the acquisition optimiser uses, against central differences
    (step 1e-6; tolerance 1e-5 relative, 1e-7 absolute: the differences' own error)."""
    portfolio = Portfolio(incumbent="mean")
    portfolio._ucb.width = portfolio.width(20, 4)
    acq = portfolio.members[member]
    state = _state(0.4)
    value, d_mean, d_var = acq.derivatives(mean, var, state)
    h = 1e-6

    def f(m, v):
        return float(acq(np.array([m]), np.array([v]), state)[0])

    assert value == pytest.approx(f(mean, var), rel=1e-12)
    assert d_mean == pytest.approx((f(mean + h, var) - f(mean - h, var)) / (2 * h), 1e-5, 1e-7)
    assert d_var == pytest.approx((f(mean, var + h) - f(mean, var - h)) / (2 * h), 1e-5, 1e-7)


def test_the_ucb_width_is_hebos():
    """HEBO's ``kappa = sqrt(upsi 2 ln(t^(2 + d/2) 3 pi^2 / (3 delta)))`` (its commented form,
    equal to the expanded one it uses), with ``t`` floored at 1."""
    portfolio = Portfolio()
    for t, d in [(1, 2), (10, 4), (59, 6)]:
        expected = math.sqrt(0.5 * 2 * math.log(t ** (2.0 + d / 2.0) * 3 * math.pi**2 / 0.03))
        assert portfolio.width(t, d) == pytest.approx(expected, rel=1e-12)
    assert portfolio.width(0, 3) == portfolio.width(1, 3)
    assert Portfolio(upsilon=2.0).width(10, 4) == pytest.approx(2 * portfolio.width(10, 4))


def test_draw_picks_every_member_from_the_generator_and_sets_the_width():
    portfolio = Portfolio()
    picks = [portfolio.draw(np.random.default_rng(s), t=30, dim=4).name for s in range(300)]
    counts = {name: picks.count(name) for name in ("logei", "logpi", "ucb")}
    # 300 fair draws of three: each count is 100 +- 8.2 (one sd); 60 is below 4.8 sds
    assert min(counts.values()) > 60, counts
    assert portfolio._ucb.width == pytest.approx(portfolio.width(30, 4))


def test_a_ucb_with_its_own_width_ignores_beta():
    mean, var = np.array([0.1, 0.2]), np.array([0.04, 0.01])
    assert UCB().reads_beta and not UCB(width=1.5).reads_beta
    np.testing.assert_allclose(UCB(width=1.5)(mean, var, _state(0.0)), [0.4, 0.35])
    np.testing.assert_allclose(UCB()(mean, var, _state(0.0)), [0.5, 0.4])  # beta 2
    with pytest.raises(ValueError, match="width"):
        UCB(width=-1.0)


def test_the_portfolio_is_taken_by_name_and_refuses_bad_arguments():
    assert "portfolio" in ACQUISITIONS
    assert isinstance(make_acquisition("portfolio"), Portfolio)
    assert make_acquisition("portfolio").incumbent == "auto"
    with pytest.raises(ValueError, match="upsilon"):
        Portfolio(upsilon=0.0)
    with pytest.raises(ValueError, match="upsilon"):
        Portfolio(upsilon=math.inf)
    with pytest.raises(TypeError, match="upsilon"):
        Portfolio(upsilon=True)
    with pytest.raises(ValueError, match="delta"):
        Portfolio(delta=1.0)
    with pytest.raises(ValueError, match="incumbent"):
        Portfolio(incumbent="best")
    with pytest.raises(ValueError, match="turns"):
        Portfolio(turns="global")


def test_each_proposal_maximises_the_member_drawn_for_it(monkeypatch, told_gpucb):
    """Over finite candidates the proposal is the argmax of the member the optimizer drew for
    it (with its own generator, after ``t`` told points in ``d`` dimensions); across seeds
    every member is drawn, and the members' argmaxes differ on these candidates."""
    C = np.random.default_rng(0).random((400, 2))
    drawn_names = set()
    for seed in range(12):
        opt = told_gpucb(12, acquisition=Portfolio())
        opt.reseed(seed)
        drawn = []
        real = opt.acquisition.draw

        def spy(rng, t, dim, local, real=real, drawn=drawn):
            assert not local  # candidates given: not the trust region's turn
            member = real(rng, t=t, dim=dim, local=local)
            drawn.append((member, t, dim))
            return member

        monkeypatch.setattr(opt.acquisition, "draw", spy)
        x = opt.ask(candidates=C)
        assert len(drawn) == 1
        member, t, dim = drawn[0]
        assert (t, dim) == (12, 2)
        mean, var = opt._posterior_given(None)(C)
        state = opt._acquisition_state()
        argmaxes = {m.name: int(np.argmax(m(mean, var, state))) for m in opt.acquisition.members}
        assert len(set(argmaxes.values())) == 3, argmaxes
        np.testing.assert_array_equal(x, C[argmaxes[member.name]])
        drawn_names.add(member.name)
    assert drawn_names == {"logei", "logpi", "ucb"}


def test_a_trust_region_turn_draws_a_member_and_d_counts_parameters(monkeypatch):
    """The trust region's turns maximise a member too; HEBO's ``d`` is the number of
    parameters (a categorical one-hot block of three coordinates counts once)."""
    layout = (Block(0, 1, "real"), Block(1, 4, "categorical"))
    opt = GPUCB(
        4,
        seed=0,
        surrogate="fitted",
        acquisition="portfolio",
        n_raw_samples=64,
        layout=layout,
        local_share=2,
    )
    rng = np.random.default_rng(1)
    for _ in range(10):
        x = np.zeros(4)
        x[0] = rng.random()
        x[1 + rng.integers(3)] = 1.0
        opt.tell(x, float(-((x[0] - 0.3) ** 2) + 0.1 * x[2]))
    local = []
    real_local = opt._local_candidates

    def spy_local(P):
        C = real_local(P)
        local.append(C is not None)
        return C

    monkeypatch.setattr(opt, "_local_candidates", spy_local)
    drawn = []
    real = opt.acquisition.draw
    monkeypatch.setattr(
        opt.acquisition,
        "draw",
        lambda rng, t, dim, local: drawn.append((dim, local)) or real(rng, t=t, dim=dim),
    )
    opt.ask()  # 10 told: the trust region's turn
    assert local == [True] and drawn == [(2, True)]


@pytest.mark.parametrize("turns", ["all", "local"])
def test_local_turns_draw_only_in_the_trust_region(monkeypatch, told_gpucb, turns):
    """With ``turns="local"`` a proposal over the whole cube maximises log-EI without touching
    the generator, and the trust region's turns draw as ``"all"`` draws on every turn."""
    drawn = []
    for n in (10, 11):  # with local_share=2: the trust region's turn, then the cube's
        opt = told_gpucb(n, acquisition=Portfolio(turns=turns), local_share=2)
        real = opt.acquisition.draw

        def spy(rng, t, dim, local, real=real):
            state = rng.bit_generator.state
            member = real(rng, t=t, dim=dim, local=local)
            drawn.append((local, member.name, rng.bit_generator.state != state))
            return member

        monkeypatch.setattr(opt.acquisition, "draw", spy)
        opt.ask()
    assert [d[0] for d in drawn] == [True, False]
    assert drawn[0][2]  # the trust region's turn drew with the generator
    assert drawn[1][1:] == (("logei", False) if turns == "local" else (drawn[1][1], True))
    portfolio = Portfolio(turns="local")
    assert "turns='local'" in repr(portfolio)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    assert portfolio.draw(rng, t=5, dim=2, local=False).name == "logei"
    assert rng.bit_generator.state == state


def test_a_start_up_or_uniform_turn_draws_no_member(monkeypatch, told_gpucb):
    """The start-up's uniform draws (the adapters' ``ask(uniform=True)``) and the uniform
    share's turns are not the acquisition's: no member is drawn for them."""
    opt = GPUCB(2, seed=0, surrogate="fitted", acquisition="portfolio", n_raw_samples=64)
    monkeypatch.setattr(opt.acquisition, "draw", lambda *a, **k: pytest.fail("drawn"))
    opt.ask(uniform=True)
    opt = told_gpucb(12, acquisition="portfolio", uniform_share=3)
    monkeypatch.setattr(opt.acquisition, "draw", lambda *a, **k: pytest.fail("drawn"))
    opt.ask()


def test_a_study_with_the_portfolio_is_reproducible(studied_twice):
    values = studied_twice({"acquisition": "portfolio"}, n_trials=18, categorical=False)
    assert values[0] == values[1]
    assert max(values[0]) > -0.01


def test_under_joint_dp_a_portfolio_over_the_told_rewards_is_refused():
    """Under joint DP the told rewards are raw data: the default incumbent (``"auto"``, the
    best told reward while the scores look exact) is refused, the posterior mean's taken."""
    with pytest.raises(ValueError, match="reads the best told reward"):
        QFFGPUCB(2, privacy="jdp", acquisition="portfolio")
    opt = QFFGPUCB(2, privacy="jdp", acquisition=Portfolio(incumbent="mean"))
    assert opt.acquisition.incumbent == "mean"
