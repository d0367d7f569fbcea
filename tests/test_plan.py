"""The privacy plan: the privacy settings checked once where they enter, and every release and
report made from the plan (docs/architecture.md, "The privacy plan")."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import numpy as np
import optuna
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression

from privtune import PrivateBOSearchCV, PrivateGPUCBSampler, PrivateSelectionSearchCV
from privtune.plan import REPORT_DELTA, SEARCH, STUDY, PrivacyPlan
from privtune.privacy import GaussianCurator, LaplaceCurator, PrivacyLedger

PACKAGE = Path(__file__).resolve().parents[1] / "privtune"

#: The functions that check a privacy setting, and what builds a release.
CHECKERS = {"check_epsilon", "check_value_range", "check_budget_pair", "from_args", "from_arg"}
BUILDERS = {"LaplaceCurator", "GaussianCurator", "ScoreRelease", "one_shot_choice"}


def _calls(names: set[str]) -> set[tuple[str, str]]:
    """``(file, enclosing function)`` of every call of one of ``names`` outside
    ``privtune/privacy/``."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("privacy/"):
            continue

        def visit(node: ast.AST, where: str, rel: str = rel) -> None:
            for child in ast.iter_child_nodes(node):
                inner = where
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    inner = f"{where}.{child.name}" if where else child.name
                if isinstance(child, ast.Call):
                    f = child.func
                    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                    if name is not None and name.lstrip("_") in names:
                        found.add((rel, inner))
                visit(child, inner, rel)

        visit(ast.parse(path.read_text()), "")
    return found


def test_the_privacy_settings_are_validated_by_the_plan_alone():
    # Above the privacy package, a privacy setting is checked by PrivacyPlan.check (and its
    # _check_ranges); the other callers check a setting of their own entry point.
    assert _calls(CHECKERS) == {
        ("plan.py", "PrivacyPlan.check"),
        ("plan.py", "_check_ranges"),
        # RecordObjective's value_range and estimator_epsilon; the search's estimator_epsilon
        ("records.py", "RecordObjective.__init__"),
        ("sklearn.py", "_PrivateSearchCV._fit_guarantee"),
        # plot_pick's range; FederatedSearch's value_range (user-level DP, its own settings)
        ("optuna_pick.py", "plot_pick"),
        ("federated/search.py", "FederatedSearch._value_range"),
        # private selection's modes take the plan's checked epsilon and budget: the one-shot
        # plan from the plan itself, repeat-and-select's in the search
        ("plan.py", "PrivacyPlan.one_shot_plan"),
        ("sklearn.py", "_ChoiceSearch._plan_privacy"),
        # the selection among privately trained models: the engine function's own budget
        # (the plan's, checked, from both doors), and the Optuna door's resolution preview
        ("private_models.py", "select_private_model"),
        ("optuna_privacy.py", "StudyPrivacy.select_models"),
    }


def test_every_release_is_built_by_the_plan():
    assert _calls(BUILDERS) == {
        ("plan.py", "PrivacyPlan.curator"),
        ("plan.py", "PrivacyPlan.release"),
        ("plan.py", "PrivacyPlan.one_shot"),
    }


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"epsilon": 1.0, "privacy_budget": (1.0, 1e-6)}, ValueError, "not both"),
        ({"epsilon": 0.0}, ValueError, "epsilon must be a finite float > 0"),
        ({"epsilon": "1"}, TypeError, "epsilon must be a float > 0"),
        ({"privacy_budget": (1.0, 2.0)}, ValueError, r"privacy_budget\[1\] \(delta\)"),
        ({"privacy_budget": 1.0}, ValueError, "privacy_budget must be a pair"),
        ({"privacy_budget": (1.0, 1e-6), "value_range": (0, 1)}, ValueError, "n_trials is"),
        ({"epsilon": 1.0, "value_range": (1.0, 0.0)}, ValueError, "value_range must be a pair"),
        ({"epsilon": 1.0, "value_range": {"a": (0, 1)}}, ValueError, "value_range must be a pair"),
        ({"epsilon": 1.0, "privacy_unit": "rows"}, ValueError, "privacy_unit must be"),
        ({"privacy_unit": "record", "value_range": (0, 1)}, ValueError, "needs epsilon"),
        ({"epsilon": 1.0}, ValueError, "value_range is required"),
    ],
)
def test_a_bad_setting_is_refused_with_its_name(kwargs, error, message):
    with pytest.raises(error, match=message):
        PrivacyPlan.check("gp-ucb", door=STUDY, **kwargs)


def test_the_qff_privacy_beta_is_read_for_the_qff_algorithms_only():
    # GO-UCB's own beta (its exploration, a number, a callable or None) is not Dubey's
    plan = PrivacyPlan.check("go-ucb", epsilon=1.0, optimizer_kwargs={"beta": lambda t: 1.0})
    assert plan.privacy_beta == 0.1
    qff = PrivacyPlan.check("qff-ldp", epsilon=1.0, optimizer_kwargs={"privacy_beta": 0.2})
    assert qff.privacy_beta == 0.2


def test_the_algorithms_rules_are_checked_with_the_settings():
    with pytest.raises(ValueError, match="privacy_budget is available for the algorithms"):
        PrivacyPlan.check("qff-ldp", privacy_budget=(1.0, 1e-6), n_reports=10)
    with pytest.raises(ValueError, match="privacy_unit='record' protects"):
        PrivacyPlan.check("qff-ldp", epsilon=1.0, value_range=(0, 1), privacy_unit="record")
    with pytest.raises(ValueError, match="not available in a search"):
        PrivacyPlan.check("qff-jdp", epsilon=1.0, value_range=(0, 1), door=SEARCH)
    with pytest.raises(ValueError, match="not a dict"):
        PrivacyPlan.check(epsilon=1.0, value_range={"score": (0, 1)}, privacy_unit="record")
    for epsilon in (1.0, None):
        with pytest.raises(ValueError, match=r"optimizer_kwargs\['privacy_beta'\]"):
            PrivacyPlan.check(
                "qff-ldp", epsilon=epsilon, value_range=(0, 1), optimizer_kwargs={"privacy_beta": 2}
            )


def test_a_budget_is_spread_over_the_planned_reports_and_named_as_given():
    plan = PrivacyPlan.check(privacy_budget=(2.0, 1e-5), value_range=(0, 1), n_reports=20)
    assert plan.budget is not None and plan.budget.n_reports == 20
    assert plan.epsilon == pytest.approx(plan.budget.epsilon_per_report)
    assert plan.setting == "privacy_budget" and plan.delta == 1e-5
    # a search: one report per candidate and per metric named in value_range
    per_metric = PrivacyPlan.check(
        privacy_budget=(2.0, 1e-5),
        value_range={"accuracy": (0, 1), "f1": (0, 1)},
        n_reports=lambda ranges: 10 * len(ranges),
        door=SEARCH,
    )
    assert per_metric.budget is not None and per_metric.budget.n_reports == 20
    # private selection: the whole publication's, not spread
    whole = PrivacyPlan.check(privacy_budget=(2.0, 1e-5), value_range=(0, 1), kind="choice")
    assert whole.budget is None and whole.epsilon is None and whole.private
    # a search's unit means nothing without privacy (its settings stay as they were)
    assert PrivacyPlan.check(privacy_unit="record", door=SEARCH).unit_kind == "score"
    exact = PrivacyPlan.check()
    assert not exact.private and exact.setting == "epsilon" and exact.delta == REPORT_DELTA


def test_the_record_unit_binds_n_val_and_scales_the_models_epsilon():
    plan = PrivacyPlan.check(epsilon=0.5, value_range=(0, 1), privacy_unit="record")
    assert plan.unit is None and plan.model_epsilon == 0.5
    with pytest.raises(ValueError, match="not known yet"):
        plan.release()
    bound = plan.bound(400)
    assert bound.unit is not None and bound.unit.n_val == 400
    assert bound.model_epsilon == pytest.approx(200.0)
    curator = bound.curator()
    assert isinstance(curator, LaplaceCurator)
    assert curator.scale == pytest.approx(1.0 / (400 * 0.5))


def test_a_release_is_the_curator_of_the_privacy_model_seeded_by_the_plan():
    laplace = PrivacyPlan.check(epsilon=1.0, value_range=(0, 1), noise_seed=3)
    first, second = laplace.release(), laplace.release()
    assert first is not None and second is not None
    assert first(0.5, owner="s", number=0)[0] == second(0.5, owner="s", number=0)[0]
    gaussian = PrivacyPlan.check("qff-ldp", epsilon=1.0, value_range=(0, 1))
    assert isinstance(gaussian.curator(), GaussianCurator)
    assert PrivacyPlan.check("qff-jdp", epsilon=1.0, value_range=(0, 1)).release() is None
    assert PrivacyPlan.check("gp-ucb").release() is None


def test_the_report_is_composed_from_the_plan():
    plan = PrivacyPlan.check(privacy_budget=(2.0, 1e-5), value_range=(0, 1), n_reports=4)
    ledger = PrivacyLedger()
    release = plan.release(ledger=ledger, meter=plan.meter())
    assert release is not None
    for i in range(3):
        release(0.5, owner="s", number=i)
    report = plan.report(ledger)
    assert report["n_reports"] == 3 and report["planned_reports"] == 4
    assert report["privacy_unit"] == "score" and report["budget_delta"] == 1e-5


def test_every_adapter_checks_its_settings_once(monkeypatch):
    X, y = load_breast_cancer(return_X_y=True)
    checks = []
    original = PrivacyPlan.check.__func__

    def counted(cls, *args, **kwargs):
        checks.append(kwargs.get("epsilon"))
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(PrivacyPlan, "check", classmethod(counted))
    model, space = LogisticRegression(max_iter=200), {"C": (0.01, 10.0, "log-uniform")}
    for search in (PrivateBOSearchCV, PrivateSelectionSearchCV):
        checks.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the resolution warning at the score unit
            fitted = search(model, space, epsilon=1.0, n_iter=3, cv=3, random_state=0)
            fitted.fit(X[:200], y[:200])
        assert checks == [1.0], search.__name__
        assert "protects" in fitted.privacy_report_

    checks.clear()
    sampler = PrivateGPUCBSampler(epsilon=1.0, value_range=(0.0, 1.0), seed=0)
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.optimize(sampler.privatize(lambda t: t.suggest_float("x", 0, 1)), n_trials=3)
    assert checks == [1.0]
    assert sampler.plan is sampler._privacy.plan
    assert np.isfinite(study.best_value)
