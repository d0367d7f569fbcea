"""The tuning engine below the adapters, the algorithm registry and the privacy bookkeeping."""

from __future__ import annotations

import zlib

import numpy as np
import optuna
import pytest

import privtune.registry as registry
from privtune import PrivateBOSearchCV, PrivateGPUCBSampler
from privtune.features import RandomFourierFeatures
from privtune.federated import FTSAgent, SubRegions
from privtune.plan import PrivacyPlan
from privtune.privacy import GaussianCurator, LaplaceCurator, PrivacyLedger, Receipt
from privtune.privacy.receipts import event_from_data, event_to_data
from privtune.privacy.seeds import report_generator, stream_seed
from privtune.privacy.withhold import clean, describe, outgoing
from privtune.registry import REGISTRY, PrivacyModel
from privtune.space import Integer, SearchSpace
from privtune.tuning import OutsideArm, TuningEngine

SPACE = SearchSpace({"x": (0.0, 1.0), "y": (0.0, 1.0)})


def history(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    return X, 1.0 - ((X - 0.3) ** 2).sum(axis=1)


# -- the engine ------------------------------------------------------------------------------------
def test_a_cached_and_a_rebuilt_model_propose_the_same_point():
    X, y = history(12)
    cached = TuningEngine("gp-ucb", value_range=(0.0, 1.0), n_startup=3)
    for n in range(4, 13):  # grows the cached model one row at a time
        opt, _ = cached.sync("s", SPACE, range(n), X[:n], y[:n], seed=1)
    fresh = TuningEngine("gp-ucb", value_range=(0.0, 1.0), n_startup=3)
    opt2, _ = fresh.sync("s", SPACE, range(12), X, y, seed=1)
    assert cached.replay("s").n_rebuilds == 1 and fresh.replay("s").n_rebuilds == 1
    a = cached.ask(SPACE, opt, n_told=12, key=[5, 12])
    b = fresh.ask(SPACE, opt2, n_told=12, key=[5, 12])
    np.testing.assert_array_equal(a, b)


def test_a_new_observed_range_maps_the_rewards_unless_a_failure_was_told():
    """Without a value_range the reward scale is the observed range. A new extreme maps the
    cached model's rewards (the default model standardises them); a failure is told the lowest
    reward of the scale, which an affine map would not keep there, so then the model is
    rebuilt."""
    X, y = history(6)
    y[5] = 2.0  # a new best: the range moves
    for failed, rebuilds in ((None, 1), (np.arange(6) == 1, 2)):
        engine = TuningEngine("gp-ucb", n_startup=3)
        first = None if failed is None else failed[:5]
        engine.sync("s", SPACE, range(5), X[:5], y[:5], failed=first, seed=1)
        engine.sync("s", SPACE, range(6), X, y, failed=failed, seed=1)
        assert engine.replay("s").n_rebuilds == rebuilds


def test_the_start_up_asks_once_whether_exact_scores_repeat():
    """With exact scores the start-up proposes the best told configuration again after half of
    ``n_startup`` draws; a repeat that returns the same score ends the start-up, one that
    does not (a noisy objective) lets it run to ``n_startup``."""
    X, y = history(5)
    engine = TuningEngine("gp-ucb", value_range=(0.0, 1.0), n_startup=10)
    assert not engine.any_uniform_start(SPACE, 5) and engine.any_uniform_start(SPACE, 4)
    opt, _ = engine.sync("s", SPACE, range(5), X, y, seed=0)
    assert engine.startup_step(SPACE, opt, 5) == "again"
    again = engine.ask(SPACE, opt, n_told=5, key=[1, 5])
    np.testing.assert_array_equal(again, X[np.argmax(y)])
    assert engine.startup_step(SPACE, opt, 6) == "uniform"  # the repeat is pending: unknown
    for second, step in ((y.max(), "model"), (y.max() - 0.1, "uniform")):
        engine = TuningEngine("gp-ucb", value_range=(0.0, 1.0), n_startup=10)
        opt, _ = engine.sync(
            "s", SPACE, range(6), np.vstack([X, again]), np.append(y, second), seed=0
        )
        assert engine.startup_step(SPACE, opt, 6) == step
        assert engine.startup_step(SPACE, opt, 10) == "model"


@pytest.mark.parametrize(
    "kwargs, space",
    [
        ({"epsilon": 1.0}, SPACE),  # privatized scores: a repeat is a fresh draw anyway
        ({"heavy_tailed": True}, SPACE),  # declared noisy
        ({}, SearchSpace({"a": Integer(1, 40), "b": Integer(1, 40)})),  # finite: each once
    ],
)
def test_the_start_up_asks_nothing_of_noisy_scores_or_finite_spaces(kwargs, space):
    engine = TuningEngine("gp-ucb", value_range=(0.0, 1.0), n_startup=10, **kwargs)
    assert not engine.probes(space)
    assert engine.any_uniform_start(space, 9) or space.n_configurations is not None
    X, y = history(5)
    opt, _ = engine.sync("s", space, range(5), space.snap(X), y, seed=0)
    assert [engine.startup_step(space, opt, n) for n in (5, 9, 10)] == [
        "uniform",
        "uniform",
        "model",
    ]


def test_the_ask_policy_is_uniform_until_n_startup_rewards():
    X, y = history(4)
    engine = TuningEngine("gp-ucb", value_range=(0.0, 1.0), n_startup=5)
    opt, _ = engine.sync("s", SPACE, range(4), X, y, seed=0)
    proposal = engine.ask(SPACE, opt, n_told=4, key=[1, 2])
    opt.clear_pending()
    opt.reseed([1, 2])
    np.testing.assert_array_equal(proposal, opt.ask(uniform=True))


@pytest.mark.parametrize(
    ("algorithm", "lowest"), [("gp-ucb", -1.0), ("moma", -1.0), ("qff-ldp", 0.0)]
)
def test_a_failure_is_told_the_lowest_reward_of_the_algorithms_scale(algorithm, lowest):
    # the qff algorithms' rewards lie in [0, 1]: a penalty of -1 would leave their range
    engine = TuningEngine(algorithm, epsilon=1.0, value_range=(0.0, 1.0), n_startup=2)
    X, y = history(3)
    y[1] = np.nan
    opt, scale = engine.sync("s", SPACE, range(3), X, y, failed=np.isnan(y), seed=0)
    assert scale.lowest == lowest
    assert opt.y[1] == lowest
    assert np.all((opt.y >= lowest) & (opt.y <= 1.0))


def test_the_recommendation_never_picks_a_failure_and_keeps_an_unbeaten_baseline():
    engine = TuningEngine("gp-ucb", epsilon=0.5, value_range=(0.0, 1.0))
    X, y = history(10)
    failed = np.zeros(10, dtype=bool)
    failed[np.argmax(y)] = True  # the best configuration failed: it is never the pick
    opt, _ = engine.sync("s", SPACE, range(10), X, np.where(failed, np.nan, y), failed=failed)
    row = engine.recommend(opt, eligible=~failed)
    assert not failed[row]
    # under epsilon = 0.5 nothing is 95 % sure to beat row 0
    assert engine.recommend(opt, baseline=0, eligible=~failed) == 0


def test_the_federated_agents_recommend_through_the_same_rule():
    agent = FTSAgent(
        RandomFourierFeatures(2, 64, seed=0),
        lambda u: float(1.0 - ((u - 0.3) ** 2).sum()),
        SubRegions(2, 1),
        n_init=4,
        seed=0,
    )
    for t in range(6):
        agent.step(t, send=False)
    row = agent.recommend_row()
    assert row == int(np.argmax(agent.posterior_mean(agent.X)))
    with pytest.raises(ValueError, match="without a baseline"):
        agent.recommend_row(0)


# -- the registry ----------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:algorithm='moma' without epsilon")
def test_the_adapters_names_come_from_the_registry():
    options = PrivateBOSearchCV._parameter_constraints["algorithm"][0].options
    assert options == {"auto", *REGISTRY}
    for name, spec in REGISTRY.items():
        epsilon = 1.0 if spec.requires_privacy else None
        sampler = PrivateGPUCBSampler(name, epsilon=epsilon, value_range=(0.0, 1.0))
        assert sampler.algorithm == name
        assert sampler.privacy_model == spec.privacy_model(epsilon)


def test_one_registry_entry_adds_an_algorithm(monkeypatch):
    spec = registry.AlgorithmSpec(
        "gp-ucb-copy", REGISTRY["gp-ucb"].optimizer, PrivacyModel.LDP, registry.gp_defaults
    )
    monkeypatch.setitem(REGISTRY, spec.name, spec)
    sampler = PrivateGPUCBSampler("gp-ucb-copy", epsilon=2.0, value_range=(0, 1), seed=0)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(sampler.privatize(lambda t: t.suggest_float("x", 0, 1)), n_trials=4)
    assert sampler.privacy_report(study)["n_reports"] == 4


def test_the_privacy_model_is_data_of_the_spec():
    assert REGISTRY["qff-jdp"].privacy_model(1.0) == "jdp" and not REGISTRY["qff-jdp"].publishable
    assert REGISTRY["qff-ldp"].curator == "gaussian" and REGISTRY["tgp"].curator == "laplace"
    with pytest.raises(ValueError, match="private by construction"):
        REGISTRY["qff-ldp"].privacy_model(None)


# -- receipts, ledgers, seeds, withheld exceptions -------------------------------------------------
@pytest.mark.parametrize(
    "curator",
    [
        LaplaceCurator(1.0, (0.0, 1.0), seed=0),
        GaussianCurator(2.0, (0.0, 1.0), epsilon=1.0, delta=0.1, seed=0),
    ],
)
def test_a_ledger_rebuilt_from_stored_receipts_is_the_curators(curator):
    receipts = []
    for y in (0.2, 0.5, 0.9):
        value, receipt = curator.release(y)
        assert receipt.matches(value) and not receipt.matches(value + 1e-9)
        receipts.append(Receipt.from_attrs(receipt.to_attrs()))  # through JSON-like attrs
    assert all(r is not None for r in receipts)
    rebuilt = PrivacyLedger.from_receipts(receipts)
    assert rebuilt.summary() == curator.ledger.summary()
    assert rebuilt.composed_epsilon("pld", 1e-6) == curator.ledger.composed_epsilon("pld", 1e-6)


def test_a_stored_event_names_only_dp_accounting_events():
    data = event_to_data(LaplaceCurator(2.0, (0, 1)).event)
    assert event_from_data(data) == LaplaceCurator(2.0, (0, 1)).event
    for module in ("os", "dp_accounting.rdp"):
        with pytest.raises(ValueError):
            event_from_data({**data, "module_name": module})
    assert Receipt.from_attrs({"privtune:epsilon": 1.0}) is None  # malformed: no receipt


def test_the_joint_dp_report_goes_through_the_ledger():
    plan = PrivacyPlan.check("qff-jdp", epsilon=1.0, value_range=(0.0, 1.0))
    report = plan.report(plan.joint_dp_ledger(8))
    assert report == {
        "privacy_model": "jdp",
        "n_reports": 8,
        "epsilon_per_report": 1.0,
        "delta_per_report": registry.QFF_DEFAULT_BETA,
        "composed_epsilon_basic": 8.0,
        "privacy_unit": "score",
        "protects": f"each score, at (alpha=1, beta={registry.QFF_DEFAULT_BETA:g})-joint DP "
        "over the whole run",
    }


def test_the_noise_seed_policy_keys_reports_and_streams():
    assert report_generator(None, "s", 0) is None
    a = report_generator(3, "s", 7).random(2)
    np.testing.assert_array_equal(a, np.random.default_rng([3, zlib.crc32(b"s"), 7]).random(2))
    assert stream_seed(3, "s") == int(
        np.random.SeedSequence([3, zlib.crc32(b"s")]).generate_state(1)[0]
    )


def test_an_exception_leaves_a_private_computation_without_its_message():
    try:
        raise ValueError("mean score 0.9312")
    except ValueError as exc:
        out = outgoing(exc)
    assert type(out) is ValueError and "0.9312" not in str(out) and out.__traceback__ is None
    mine = outgoing(clean(ValueError("value_range is required")))
    assert str(mine) == "value_range is required" and mine.__context__ is None
    assert describe(KeyError("secret")) == "KeyError"


def test_a_baseline_outside_the_cube_is_kept_unless_a_told_point_beats_it():
    # Ten points told exactly (no noise: the posterior sd at a told point is near 0): a point
    # told 0.8 beats an external baseline of 0.2 known exactly, not one of 0.9, and not one of
    # 0.2 whose own noise is so large (sd 10) that nothing beats it with probability 0.95.
    engine = TuningEngine("gp-ucb", value_range=(0.0, 1.0))
    space = SearchSpace({"x": (0.0, 1.0)})
    X = np.linspace(0.05, 0.95, 10)[:, None]
    y = 0.4 + 0.4 * np.sin(3 * X[:, 0])
    opt, scale = engine.sync("s", space, list(range(10)), X, y, seed=0)
    best = int(np.argmax(y))
    assert engine.recommend(opt, scale, outside=OutsideArm(0.2, 0.0)) == best
    assert engine.recommend(opt, scale, outside=OutsideArm(0.9, 0.0)) == -1
    assert engine.recommend(opt, scale, outside=OutsideArm(0.2, 100.0)) == -1
    eligible = np.arange(10) != best
    assert engine.recommend(opt, scale, outside=OutsideArm(0.2, 0.0), eligible=eligible) != best


def test_an_outside_baseline_needs_the_scale_and_no_row():
    engine = TuningEngine("gp-ucb")
    opt, scale = engine.sync("s", SearchSpace({"x": (0.0, 1.0)}), [0], np.array([[0.5]]), [0.3])
    with pytest.raises(ValueError, match="outside baseline needs the reward scale"):
        engine.recommend(opt, outside=OutsideArm(0.2, 0.0))
    with pytest.raises(ValueError, match="outside baseline needs the reward scale"):
        engine.recommend(opt, scale, baseline=0, outside=OutsideArm(0.2, 0.0))


def test_an_outside_arm_is_the_pick_alone_and_no_pick_when_it_failed():
    engine = TuningEngine("gp-ucb", value_range=(0.0, 1.0))
    assert engine.recommend(None, outside=OutsideArm(0.4, 0.01)) == -1
    none_eligible = np.zeros(1, dtype=bool)
    opt, scale = engine.sync("s", SearchSpace({"x": (0.0, 1.0)}), [0], np.array([[0.5]]), [0.3])
    arm = OutsideArm(0.4, 0.01)
    assert engine.recommend(opt, scale, outside=arm, eligible=none_eligible) == -1
    assert arm.std == pytest.approx(0.1)
    with pytest.raises(ValueError, match="no evaluated configuration"):
        engine.recommend(None, outside=OutsideArm(float("nan"), 0.0))
    # a failed arm is no candidate: the told point is the pick
    assert engine.recommend(opt, scale, outside=OutsideArm(float("nan"), 0.0)) == 0


def test_a_batch_records_its_proposals_turns_and_refuses_points_it_did_not_propose():
    from privtune.batch import BatchOptimization
    from privtune.space import SearchSpace

    space = SearchSpace({"x": (0.0, 1.0), "y": (0.0, 1.0)})
    bo = BatchOptimization.start(
        TuningEngine("gp-ucb", n_startup=2), space, seed=0, noise_seed=None, default_params=None
    )
    U, _, n_extra = bo.batch(0, 3, 3)
    bo.record(U, np.arange(3.0), n_extra)
    assert len(bo.turns) == 3 and bo.turns[:2] == ["start-up"] * 2, bo.turns
    assert bo.turns[2] != "start-up"  # the model's, once the two start-up draws are pending
    assert list(bo.turn_column(3)) == bo.turns
    U, _, n_extra = bo.batch(1, 3, 2)
    with pytest.raises(RuntimeError, match="3 points recorded where the last proposal made 2"):
        bo.record([*U, U[0]], np.arange(6.0), n_extra)
