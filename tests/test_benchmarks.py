import argparse
import gzip
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import optuna
import pytest
import threadpoolctl

from benchmarks import harness, zhou_tan


def test_zhou_tan_quick_mode_writes_a_summary_and_a_plot(tmp_path):
    results = zhou_tan.main(["--quick", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "quick" / "zhou_tan.json").read_text())
    assert saved["config"]["T"] == 40
    assert (tmp_path / "quick" / "zhou_tan.png").stat().st_size > 0
    for key in ("ldp-se-eps1", "heavy-se"):
        entry = results["settings"][key]["algorithms"]
        assert set(entry) == set(zhou_tan.ALGORITHMS)
        for alg in entry.values():
            curve = alg["curve_mean"]
            assert len(curve) == 40
            # Cumulative regret is non-decreasing and finite.
            assert all(math.isfinite(c) for c in curve)
            assert all(b >= a - 1e-9 for a, b in itertools.pairwise(curve))


def test_speed_quick_mode_times_every_algorithm(tmp_path):
    from benchmarks import speed

    results = speed.main(["--quick", "--out", str(tmp_path)])
    assert (tmp_path / "quick" / "speed.json").exists()
    for alg in speed.ALGORITHMS:
        for row in results["timings"][alg].values():
            assert row["ask_seconds"] >= 0 and row["tell_seconds"] >= 0


def test_optuna_tuning_quick_mode_resumes_and_summarizes(tmp_path):
    from benchmarks import optuna_tuning

    result = optuna_tuning.main(["--quick", "--out", str(tmp_path)])
    store = harness.RunStore(tmp_path / "quick", "optuna_tuning")
    runs = store.load()
    # MLP on wine, 1 seed: moma, gp-ucb and TPE without privacy; moma, gp-ucb, the private
    # random baseline and TPE on the privatized scores with epsilon = 1.
    assert len(runs) == 7
    assert (tmp_path / "quick" / "optuna_tuning.png").stat().st_size > 0
    for run in runs.values():
        assert set(run["picks"]) == {"3", "6"}
        for pick in run["picks"].values():
            # The credited score is the raw CV accuracy of a trial the study evaluated.
            assert run["raw_scores"][pick["trial"]] == pick["score"]
            assert 0.0 <= pick["score"] <= 1.0
        if run["epsilon"] != "none" and run["sampler"] != "tpe":
            assert run["privacy"]["n_reports"] == 6 - run["n_failed"]
    assert set(result["summary"]) == {"none", "1"}
    assert not list(store.folder.glob("claims/*.claim"))
    # The markdown tables: one row per task, one column per method of the setting.
    tables = (tmp_path / "quick" / "optuna_tuning.md").read_text()
    assert "| mlp | wine | " in tables
    assert "| moma | privtune (gp-ucb) | Optuna TPE |" in tables
    assert "| moma | privtune (gp-ucb) | privtune random | Optuna TPE |" in tables
    # TPE on the privatized scores saw the curator's draws of privtune's runs: trial by trial,
    # the same noise (common random numbers), so its stored values differ from the raw scores
    tpe = runs["mlp-wine-1-tpe-0"]
    assert tpe["picks"]["6"]["score"] in tpe["raw_scores"]
    # the untuned estimator's score, once per (task, seed), and the picks against it
    below = result["below_default"]["1"]["gp-ucb"]["6"]
    assert below["n_runs"] == 1 and below["n_below"] in (0, 1)
    default_run = harness.RunStore(tmp_path / "quick" / "optuna_tuning", "defaults").get(
        "mlp-wine-0"
    )
    default = default_run["score"]
    assert math.isclose(default, sum(default_run["fold_scores"]) / 5, rel_tol=1e-12)
    gp_pick = runs["mlp-wine-1-gp-ucb-0"]["picks"]["6"]["score"]
    assert math.isclose(below["mean_diff_points"], 100 * (gp_pick - default), abs_tol=1e-9)
    # "beyond noise": below the default by more than the standard error of its 5-fold mean
    se = statistics.stdev(default_run["fold_scores"]) / math.sqrt(5)
    assert below["n_below_beyond_se"] == int(gp_pick < default - se)
    # every study's first trial is the untuned MLP (all its defaults lie in the space)
    for run in runs.values():
        assert run["raw_scores"][0] == default
    assert "### Against the untuned estimator" in tables
    # Paired against the private random baseline: one (task, seed) pair per method.
    assert "Against privtune random on the same (task, seed)" in tables
    # privtune's default (gp-ucb) against each other method, per model and over all tasks
    against = result["default_against"]["1"]
    assert set(against) == {"moma", "random", "tpe"}
    tpe_pick = tpe["picks"]["6"]["score"]
    for model in ("mlp", "all"):
        cell = against["tpe"][model]["6"]
        assert cell["n_pairs"] == 1
        assert math.isclose(cell["mean_diff_points"], 100 * (gp_pick - tpe_pick), abs_tol=1e-9)
    assert "### privtune's default against each alternative" in tables
    paired = result["paired_vs_random"]["1"]
    assert set(paired) == {"moma", "gp-ucb", "tpe"}
    base = runs["mlp-wine-1-random-0"]
    for method in ("moma", "gp-ucb"):
        pick = runs[f"mlp-wine-1-{method}-0"]
        cell = paired[method]["6"]
        assert cell["n_pairs"] == 1 and cell["wins"] + cell["ties"] + cell["losses"] == 1
        diff = 100 * (pick["picks"]["6"]["score"] - base["picks"]["6"]["score"])
        assert math.isclose(cell["mean_diff_points"], diff, abs_tol=1e-9)
    # Where the trials went: per run, the median true score of the configurations it ran.
    evaluated = result["evaluated_median"]["1"]["mlp"]
    assert set(evaluated) == {"moma", "gp-ucb", "random", "tpe"}
    scores = [v for v in base["raw_scores"] if v is not None]
    assert math.isclose(evaluated["random"]["mean_points"], 100 * float(np.median(scores)))
    assert "### Where the trials went" in tables
    # A second call finds every run saved and only summarizes: the store is left as it was.
    saved = store.path.read_bytes()
    optuna_tuning.main(["--quick", "--out", str(tmp_path)])
    assert store.path.read_bytes() == saved
    # privtune's private picks keep the enqueued defaults (trial 0) unless beaten; the picks of
    # the best posterior mean alone are kept beside them
    gp_run = store.get("mlp-wine-1-gp-ucb-0")
    assert gp_run["pick_rule"] == optuna_tuning.PICK_RULE
    assert set(gp_run["picks_best_mean"]) == {"3", "6"}
    # a run saved under the earlier rule (picks = best posterior mean) is re-picked by replay
    old = dict(gp_run, picks=gp_run["picks_best_mean"])
    del old["pick_rule"], old["picks_best_mean"]
    store.append("mlp-wine-1-gp-ucb-0", old)
    args = argparse.Namespace(out=tmp_path / "quick", samplers=["gp-ucb"])
    optuna_tuning.repick(args)
    assert store.get("mlp-wine-1-gp-ucb-0") == gp_run
    assert store.path.read_bytes() == saved  # the same runs again, compacted: the same bytes
    # a replay that does not reproduce the saved picks stops
    old["picks"] = {n: {"trial": p["trial"] + 1, "score": 0.0} for n, p in old["picks"].items()}
    store.append("mlp-wine-1-gp-ucb-0", old)
    with pytest.raises(RuntimeError, match="does not reproduce"):
        optuna_tuning.repick(args)


def test_optuna_tuning_score_spread_uses_the_uniform_draws_only():
    from benchmarks import optuna_tuning

    def row(sampler, eps, scores, dataset="wine"):
        return {
            "model": "mlp",
            "dataset": dataset,
            "epsilon": eps,
            "sampler": sampler,
            "raw_scores": scores,
        }

    rows = [
        row("random-optuna", "none", [0.5, 0.6, None]),
        row("random-optuna", "none", [0.7, 0.8, 0.9]),  # a second seed, pooled
        row("tpe", "none", [1.0, 1.0]),  # not uniform draws: ignored
        row("random", "1", [0.0, 0.0]),  # raw scores of a private run: ignored
    ]
    spread = optuna_tuning._score_spread(rows)
    cell = spread["tasks"]["mlp"]["wine"]
    assert cell["n_configurations"] == 5  # the failed trial (None) is left out
    assert math.isclose(cell["sd_points"], 100 * np.std([0.5, 0.6, 0.7, 0.8, 0.9], ddof=1))
    assert math.isclose(cell["max_minus_median_points"], 20.0)
    assert math.isclose(cell["q90_minus_median_points"], 100 * (0.86 - 0.7))
    # Laplace(1 / epsilon) has standard deviation sqrt(2) / epsilon.
    assert math.isclose(spread["noise_sd_points"]["10"], 100 * math.sqrt(2) / 10)
    assert "| mlp | wine | 5 | 15.8 | 16.0 | 20.0 |" in optuna_tuning._spread_markdown(spread)


def test_run_store_claims_are_exclusive_and_stale_ones_taken_over(tmp_path):
    store = harness.RunStore(tmp_path, "bench")
    assert store.claim("a")  # this process owns it now
    assert not store.claim("a")  # a live owner keeps it
    assert not harness.RunStore(tmp_path, "bench").claim("a")  # whichever store asks
    marker = tmp_path / "bench" / "claims" / "a.claim"
    assert marker.read_text() == str(os.getpid())
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    marker.write_text(dead.stdout.strip())  # a killed run's claim
    assert store.claim("a")
    assert marker.read_text() == str(os.getpid())
    store.release("a")
    assert not marker.exists()
    # a stale claim does not stop the run from being computed and saved
    marker.write_text(dead.stdout.strip())
    assert harness.run_missing(store, "a", lambda: {"seconds": 1.0}) == {"seconds": 1.0}
    assert store.get("a") == {"seconds": 1.0} and not marker.exists()
    assert harness.run_missing(store, "a", lambda: {"seconds": 2.0}) is None  # saved already


def test_collect_runs_names_the_runs_another_process_is_computing(tmp_path, capsys):
    store = harness.RunStore(tmp_path, "bench")
    (tmp_path / "bench" / "claims").mkdir(parents=True)
    (tmp_path / "bench" / "claims" / "b.claim").write_text(str(os.getppid()))  # a live owner
    rows = harness.collect_runs(
        store, [(n, lambda n=n: {"run": n, "seconds": 0.0}) for n in ("a", "b")]
    )
    assert rows == [{"run": "a", "seconds": 0.0}]
    assert store.names() == ["a"]
    err = capsys.readouterr().err
    assert "1 run(s) are being computed by another process" in err and "(b)" in err


_APPEND = """
import sys
from pathlib import Path
from benchmarks import harness
store = harness.RunStore(Path(sys.argv[1]), "bench")
for name in sys.argv[2:]:
    store.append(name, {"name": name, "values": [0.1 * len(name), None]})
"""


def test_run_store_is_shared_by_processes_read_in_name_order_and_compacted(tmp_path):
    root = Path(__file__).resolve().parents[1]
    names = [f"{k}-{i}" for k in ("a", "b") for i in range(30)]
    names += ["c", "c-cv", "c-scores"]  # c-cv.json and c-scores.json sorted before c.json
    writers = [
        subprocess.Popen([sys.executable, "-c", _APPEND, str(tmp_path), *names[i::2]], cwd=root)
        for i in range(2)
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    store = harness.RunStore(tmp_path, "bench")
    order = sorted(names, key=lambda n: f"{n}.json")
    assert order[-3:] == ["c-cv", "c-scores", "c"]
    assert store.names() == order
    runs = store.load()
    assert list(runs) == order
    assert all(run == {"name": n, "values": [0.1 * len(n), None]} for n, run in runs.items())
    assert harness.load_runs(store) == list(runs.values())
    # one gzip member per appended run, until compacted into one: every run kept, in order
    appended = store.path.read_bytes()
    assert appended.count(b"\x1f\x8b\x08") >= len(names)
    store.append("a-0", {"name": "a-0", "values": "again"})  # saved again: the last one counts
    store.compact()
    compacted = store.path.read_bytes()
    assert len(compacted) < len(appended)
    lines = gzip.decompress(compacted).decode().splitlines()
    assert [json.loads(line)["name"] for line in lines] == order
    again = harness.RunStore(tmp_path, "bench").load()
    assert again == {**runs, "a-0": {"name": "a-0", "values": "again"}}
    store.compact()
    assert store.path.read_bytes() == compacted  # nothing to do: the file is left as it is
    # the same runs give the same bytes, whatever order they were saved in
    other = harness.RunStore(tmp_path / "other", "bench")
    for name in reversed(order):
        other.append(name, again[name])
    other.compact()
    assert other.path.read_bytes() == compacted
    store.remove(["b-3", "c"])
    assert store.names() == [n for n in order if n not in ("b-3", "c")]


def test_a_run_added_to_a_compacted_store_changes_one_gzip_member(tmp_path):
    store = harness.RunStore(tmp_path, "bench")
    for i in range(4000):
        store.append(f"run-{i}", {"i": i, "values": [i / 7, i / 11, i / 13]})
    store.compact()
    before = store.path.read_bytes()
    store.append("run-2000-new", {"i": -1, "values": []})
    store.compact()
    after = store.path.read_bytes()
    assert len(after) > len(before) and store.names()[-1] == "run-999"

    # the members before and after the new run's are the same bytes: git keeps a small delta
    def common(a: bytes, b: bytes) -> int:  # the length of their common start
        n = min(len(a), len(b))
        return next((i for i in range(n) if a[i] != b[i]), n)

    prefix, suffix = common(before, after), common(before[::-1], after[::-1])
    assert prefix > 0 and suffix > 0 and prefix + suffix > 0.8 * len(before)


def test_run_files_are_moved_into_the_store(tmp_path):
    folder = tmp_path / "bench" / "runs"
    folder.mkdir(parents=True)
    for name in ("x", "x-cv", "y"):
        harness.write_json(folder / f"{name}.json", {"name": name})
    (folder / "z.claim").write_text("0")  # a stale claim
    moved = harness.compact_results(tmp_path)
    assert moved == {str(tmp_path / "bench"): 3}
    assert not folder.exists()
    store = harness.RunStore(tmp_path, "bench")
    assert store.load() == {n: {"name": n} for n in ("x-cv", "x", "y")}


def test_optuna_overhead_quick_mode_times_privtune_and_tpe(tmp_path):
    from benchmarks import optuna_overhead

    result = optuna_overhead.main(["--quick", "--out", str(tmp_path)])
    for name in ("privtune", "tpe"):
        assert result["seconds_per_trial"][name]["12"] > 0
    assert result["trial_ratio"]["tpe"]["12"] > 0
    timings = result["seconds_per_sample_relative"]
    for name in [*optuna_overhead.PRIVTUNE, "tpe"]:
        for row in timings[name].values():
            assert row["cold_s"] > 0 and row["warm_s"] > 0
    spread = result["batch_of_4_after_50_trials"]
    for name in ("gp-ucb", "tgp", "ata"):
        assert spread[name]["distinct"] == 4
    assert (tmp_path / "quick" / "optuna_overhead.png").stat().st_size > 0


def test_sklearn_search_quick_mode_compares_every_method(tmp_path):
    from benchmarks import sklearn_search

    result = sklearn_search.main(["--quick", "--out", str(tmp_path)])
    runs = harness.load_runs(harness.RunStore(tmp_path / "quick", "sklearn_search"))
    assert len(runs) == sum(len(m) for m in sklearn_search.METHODS.values())
    for run in runs:
        assert 0.0 <= run["score"] <= 1.0 and run["seconds"] > 0
        if run["epsilon"] == "none":
            # Exact scores: the search's best score is the pick's true CV accuracy.
            assert math.isclose(run["best_score"], run["score"], abs_tol=1e-12)
        else:
            assert run["privacy"]["n_reports"] == 4  # one per candidate
    for eps, baseline in sklearn_search.BASELINE.items():
        others = [m for m in sklearn_search.METHODS[eps] if m != baseline]
        for m in others:
            assert result["summary"][eps][m]["wins_ties_losses"] != [0, 0, 0]
    tables = (tmp_path / "quick" / "sklearn_search.md").read_text()
    assert "RandomizedSearchCV" in tables and "OptunaSearchCV (TPE)" in tables
    assert (tmp_path / "quick" / "sklearn_search.png").stat().st_size > 0


def test_privacy_units_quick_mode_computes_every_mode_at_every_n_val(tmp_path):
    from benchmarks import privacy_units

    result = privacy_units.main(["--quick", "--out", str(tmp_path)])
    runs = harness.load_runs(harness.RunStore(tmp_path / "quick", "privacy_units"))
    assert len(runs) == 2  # one (model, data set) and two seeds
    for run in runs:
        assert run["n_vals"] == [100, 200] and len(run["random"]) == 8
        assert 1 <= len(run["proposed"]) <= 4
        for row in [run["untuned"], *run["random"], *run["proposed"]]:
            # nested validation sets: the larger one's count includes the smaller's
            assert 0 <= row["val"][0] <= row["val"][1] <= 200 and 0 <= row["test"] <= 1
    cells = result["tasks"]
    assert {(c["n_val"], c["epsilon"]) for c in cells} == {(100, "1"), (200, "1")}
    for cell in cells:
        for mode in privacy_units.EXACT + privacy_units.MODES:
            assert math.isfinite(cell[mode]) and cell["n_seeds"] == 2
    assert "below_untuned_beyond_noise" in result["targets"]
    assert privacy_units.SEARCHED not in cells[0]  # not run yet
    # the real every-score searches, on the same splits: they join the summary's cells
    result = privacy_units.main(["--quick", "--scores", "--out", str(tmp_path)])
    for cell in result["tasks"]:
        assert math.isfinite(cell[privacy_units.SEARCHED])
    # the proposals' scores on the training records: the shortlist's choice joins them
    result = privacy_units.main(["--quick", "--cv", "--out", str(tmp_path)])
    for cell in result["tasks"]:
        for mode in privacy_units.TRAINING:
            assert math.isfinite(cell[mode])
    assert "exact-random" in (tmp_path / "quick" / "privacy_units.md").read_text()
    assert (tmp_path / "quick" / "privacy_units.png").stat().st_size > 0
    assert privacy_units.OPTUNA not in result["tasks"][0]  # the Optuna door: not run yet
    assert result["optuna"] == {"runs": 0}
    # the Optuna door on the same training records: its trials join the summary's cells
    result = privacy_units.main(["--quick", "--optuna", "--out", str(tmp_path)])
    runs = harness.load_runs(harness.RunStore(tmp_path / "quick", "privacy_units"))
    doors = [r for r in runs if r.get("kind") == "optuna"]
    assert len(doors) == 2
    for run in doors:
        assert run["untuned_enqueued"] and run["n_trials"] == 5  # n_iter + 1
        assert 1 <= len(run["optuna"]) <= 4  # distinct, the untuned trial apart
        assert len(run["optuna_training"]) == len(run["optuna"]) + 1
        assert run["seconds_optuna"] > 0 and run["seconds_search_proposals"] > 0
        main = next(r for r in runs if "random" in r and r["seed"] == run["seed"])
        # the untuned trial's training value is the search's (the same folds)
        assert math.isclose(run["optuna_training"][0], main["proposed_training"][0])
    for cell in result["tasks"]:
        for mode in (privacy_units.OPTUNA, privacy_units.OPTUNA_EXACT):
            assert math.isfinite(cell[mode])
    assert result["optuna"]["runs"] == 2 and result["optuna"]["median_ratio"] > 0
    assert "pf-optuna" in (tmp_path / "quick" / "privacy_units.md").read_text()
    # an untuned value outside the space (a None depth) is not enqueued: the objective's
    # untuned estimator is scored instead, as recommend(study) scores it
    assert privacy_units._untuned_params("decision_tree", 0) is None
    tree = privacy_units.run_optuna("decision_tree", "synthetic_small", 0, 300, [100, 200], 4)
    assert not tree["untuned_enqueued"] and 0 < tree["optuna_training"][0] <= 1
    assert privacy_units._untuned_params("knn", 0) == {
        "kneighborsclassifier__n_neighbors": 5,
        "kneighborsclassifier__weights": "uniform",
    }


def test_noise_samplers_quick_mode_times_both_samplers(tmp_path):
    from benchmarks import noise_samplers

    result = noise_samplers.main(["--quick", "--out", str(tmp_path)])
    assert len(result["rows"]) == 4
    assert all(r["numpy_us"] > 0 and r["opendp_us"] > 0 for r in result["rows"])
    assert (tmp_path / "quick" / "noise_samplers.json").exists()


def test_go_ucb_quick_mode_runs_every_part(tmp_path):
    from benchmarks import go_ucb

    summary = go_ucb.main(["--out", str(tmp_path), "--quick"])
    out = tmp_path / "quick"
    for name in ("synthetic", "calibration", "timing", "tuning"):
        assert (out / f"go_ucb_{name}.json").exists(), name
    assert (out / "go_ucb_synthetic.png").stat().st_size > 0
    assert (out / "go_ucb_tuning.md").read_text().count("random_forest | pima") == 1
    # cumulative regret: finite and non-decreasing (each round's regret is >= 0)
    synthetic = json.loads((out / "go_ucb_synthetic.json").read_text())["summary"]
    for curves in synthetic["f1"].values():
        assert all(math.isfinite(c) for c in curves["mean"])
        assert all(b >= a - 1e-9 for a, b in itertools.pairwise(curves["mean"]))
    # tuning regret is against the best accuracy any method found on the same fold
    entry = summary["summary"]["random_forest|pima"]
    assert set(entry) == {"go-ucb", "gp-pi"}
    assert min(v["final_mean"] for v in entry.values()) >= 0.0


def test_go_ucb_synthetic_functions_and_their_ranges():
    from benchmarks import go_ucb

    ranges = go_ucb._ranges()
    # f2 (Styblinski-Tang as written) peaks at x_i = -2.9035: 39.166 per dimension
    assert ranges["f2"][1] == np.float64(ranges["f2"][1])
    assert abs(ranges["f2"][1] - 20 * 39.16617) < 1e-2
    assert abs(go_ucb.f2(np.full((1, 20), -2.903534))[0] - ranges["f2"][1]) < 1e-3
    assert go_ucb.f3(np.zeros((1, 20)))[0] == ranges["f3"][1] == 0.0
    assert abs(go_ucb.f1(np.full((1, 20), 5.0))[0] - ranges["f1"][1]) < 1e-9


def test_dubey_quick_mode_runs_and_summarizes(tmp_path):
    from benchmarks import dubey

    out = dubey.main(["--out", str(tmp_path), "--quick"])
    quick = tmp_path / "quick"
    assert set(out["summary"]) == {"non-private", "alpha=1"}
    for entry in out["summary"].values():
        curve = entry["mean"]
        assert len(curve) == 16 and entry["n_trials"] == 2
        assert all(b >= a - 1e-12 for a, b in itertools.pairwise(curve))  # regret >= 0 per round
    assert (quick / "dubey_synthetic.png").stat().st_size > 0
    timing = json.loads((quick / "dubey_timing.json").read_text())["seconds_per_round"]
    assert set(timing["8"]) == {"None", "jdp", "local-jdp"}
    # Table 1: 20 rounds of every function, non-private and alpha = 1, one trial
    table1 = json.loads((quick / "dubey_table1.json").read_text())["summary"]
    assert set(table1) == {"camel", "styb", "mw"}
    assert (quick / "dubey_table1.png").stat().st_size > 0
    assert len(harness.RunStore(quick, "dubey_table1")) == 6
    # the same table with the learner of the authors' notebook (lam = 100, its width)
    code = json.loads((quick / "dubey_table1_code.json").read_text())
    assert code["learner"] == "code" and set(code["summary"]) == set(table1)
    runs = harness.load_runs(harness.RunStore(quick, "dubey_table1_code"))
    assert len(runs) == 6
    assert {r["beta_scale"] for r in runs} == {0.1, 0.01}
    for function, cells in table1.items():
        assert set(cells) == {"non-private", "alpha=1"}
        for setting, entry in cells.items():
            assert entry["t"] == [20] and entry["n_trials"] == 1
            assert math.isfinite(entry["final_mean"]) and 0.0 <= entry["final_mean"] <= 20.0
            assert entry["paper"] == dubey.PAPER_TABLE1[function][setting]


def test_dubey_decision_sets_have_the_papers_gap():
    from benchmarks import dubey

    rng = np.random.default_rng(0)
    f = dubey.make_function(rng)
    for _ in range(5):
        D = dubey.decision_set(f, rng)
        v = np.sort(f(D))
        assert D.shape == (25, 2) and np.all(np.linalg.norm(D, axis=1) <= 2.0)
        assert v[-1] >= 0.8 and v[-2] <= 0.6  # one good arm, a gap of at least 0.2


def test_dubey_table1_functions_are_normalized_to_the_unit_interval():
    from benchmarks import dubey

    def cube(name, x):  # a point of the function's box, in the unit cube
        lo, hi = np.array(dubey.FUNCTIONS[name]["lo"]), np.array(dubey.FUNCTIONS[name]["hi"])
        return ((np.asarray(x, dtype=float) - lo) / (hi - lo))[None, :]

    # maximizers map to 1, minimizers to 0
    for x in ([0.0898420, -0.7126564], [-0.0898420, 0.7126564]):
        assert abs(dubey.normalized("camel", cube("camel", x))[0] - 1.0) < 1e-9
    for x in ([2.0, 1.0], [-2.0, -1.0]):
        assert abs(dubey.normalized("camel", cube("camel", x))[0]) < 1e-12
    assert abs(dubey.normalized("styb", cube("styb", [-2.903534] * 20))[0] - 1.0) < 1e-9
    assert abs(dubey.normalized("styb", np.ones((1, 20)))[0]) < 1e-12  # x = 4 everywhere
    mw_max = [2.202906, 1.570796, 1.284992, 1.923058, 1.720470]
    mw_max += [1.570796, 1.454414, 1.756087, 1.655717, 1.570796]
    assert abs(dubey.normalized("mw", cube("mw", mw_max))[0] - 1.0) < 1e-6
    assert dubey.normalized("mw", np.zeros((1, 10)))[0] == 0.0
    rng = np.random.default_rng(0)
    for name, spec in dubey.FUNCTIONS.items():
        v = dubey.normalized(name, rng.random((2000, len(spec["lo"]))))
        assert np.all((v >= 0.0) & (v <= 1.0)), name


def test_dai_quick_mode_runs_and_summarizes(tmp_path):
    from benchmarks import dai

    out = dai.main(["--out", str(tmp_path), "--quick"])
    quick = tmp_path / "quick"
    assert set(out["summary"]) == {"TS", "FTS-DE P=2", "S=11"}
    for name, entry in out["summary"].items():
        curve = entry["mean"]
        assert len(curve) == 4 + 1 and entry["n_runs"] == 2
        # simple regret never increases and stays in [0, 1] (the function is normalized)
        assert all(b <= a + 1e-12 for a, b in itertools.pairwise(curve))
        assert all(0.0 <= v <= 1.0 for v in curve)
        assert ("epsilon" in entry) == (name == "S=11")
    eps = out["summary"]["S=11"]["epsilon"]
    assert eps["pld"] <= eps["rdp"]  # 4 broadcasts at q = 0.25, z = 1, delta = 1/8^1.1
    assert (quick / "dai_synthetic.png").stat().st_size > 0
    svm = json.loads((quick / "dai_svm.json").read_text())["summary"]
    assert set(svm) == {"TPE", "TS", "z=1"}
    assert svm["TPE"]["epsilon"] == svm["TS"]["epsilon"] == 0.0 and svm["z=1"]["epsilon"] > 0.0
    for entry in svm.values():
        assert len(entry["mean"]) == 10 + 3 and 0.0 <= entry["best_auc"]["3"] <= 1.0
    assert (quick / "dai_svm.png").stat().st_size > 0


def test_dai_synthetic_agents_share_one_function_up_to_their_shift():
    from benchmarks import dai

    f = dai.gp_sample(200)
    assert f.min() == 0.0 and f.max() == 1.0
    objective = dai.GridObjective(f + 0.02, 0.0, seed=0)
    assert objective(np.array([1.0])) == f[-1] + 0.02
    assert objective(np.array([0.0])) == f[0] + 0.02
    parties = dai.svm_parties(20)
    assert sum(len(y) for _, y in parties) == 1797
    # about 10% positives each (6 to 15 of about 90 images): imbalanced, never one-class
    assert all(0.05 < y.mean() < 0.2 and y.sum() >= 6 for _, y in parties)


def test_one_d_check_quick_mode_reports_where_the_proposals_went(tmp_path):
    from benchmarks import one_d_check

    result = one_d_check.main(["--quick", "--out", str(tmp_path)])
    assert (tmp_path / "quick" / "one_d_check.png").stat().st_size > 0
    saved = json.loads((tmp_path / "quick" / "one_d_check.json").read_text())
    assert saved["results"] == result["results"]
    for algorithm in one_d_check.ALGORITHMS:
        for surrogate in one_d_check.SURROGATES:
            for cell in result["results"][algorithm][surrogate].values():
                assert 0.0 <= cell["boundary_share"] <= 1.0
                assert len(cell["recommended_x_runs"]) == 2
                # the recommended f is the true objective at the recommended x
                xs = np.array(cell["recommended_x_runs"])
                assert math.isclose(
                    cell["recommended_f"], float(np.mean(1 - (xs - 0.3) ** 2)), abs_tol=1e-3
                )
    # without privacy the fitted surrogate finds the optimum
    assert abs(result["results"]["gp-ucb"]["fitted"]["none"]["recommended_x"] - 0.3) < 0.02


def test_zhou_tan_real_quick_mode_runs_every_algorithm_on_the_light_sensors(tmp_path):
    from benchmarks import zhou_tan_real

    result = zhou_tan_real.main(["--quick", "--out", str(tmp_path)])
    assert set(result["settings"]) == {"light-ldp-eps1-defaults", "light-heavy-defaults"}
    for entry in result["settings"].values():
        assert set(entry["algorithms"]) == set(zhou_tan_real.ALGORITHMS)
        for alg in entry["algorithms"].values():
            curve = alg["curve_mean"]
            assert alg["curve_rounds"][-1] == 40
            assert all(math.isfinite(c) for c in curve)
            assert all(b >= a - 1e-9 for a, b in itertools.pairwise(curve))
    assert (tmp_path / "quick" / "zhou_tan_real.png").stat().st_size > 0


def test_zhou_tan_real_problems_follow_the_papers_definitions():
    from benchmarks import zhou_tan_real

    for name, n_arms, n_readings in (("light", 41, 192), ("stocks", 29, 823)):
        p = zhou_tan_real.load_problem(name)
        assert p["f"].shape == (n_arms,) and p["readings"].shape == (n_readings, n_arms)
        assert p["B"] == p["f"].max()
        # The kernel: covariance of standardised readings, a correlation matrix (PSD, unit
        # diagonal up to round-off).
        np.testing.assert_allclose(np.diag(p["K"]), 1.0, atol=1e-12)
        assert np.linalg.eigvalsh(p["K"]).min() > -1e-10
        assert np.all(np.abs(p["readings"] - p["f"]) <= p["R"])
        kernel = zhou_tan_real.ArmCovariance(p["K"])
        grid = (np.arange(n_arms) / (n_arms - 1))[:, None]
        np.testing.assert_array_equal(kernel.arms(grid), np.arange(n_arms))
        np.testing.assert_array_equal(kernel(grid[[2, 0]], grid[[1]]), p["K"][[2, 0]][:, [1]])


def test_zhou_tan_authors_quick_mode_covers_the_two_by_two_design(tmp_path):
    from benchmarks import zhou_tan_authors

    result = zhou_tan_authors.main(["--quick", "--out", str(tmp_path)])
    expected = {
        f"{o}-{p}-{s}"
        for o in ("paper", "authors")
        for p in ("defaults", "code")
        for s in ("ldp-se-eps1", "heavy-se")
    }
    assert set(result["settings"]) == expected
    for entry in result["settings"].values():
        # Random search runs once per objective and appears under both parameter sets.
        assert set(entry["algorithms"]) == set(zhou_tan_authors.ALGORITHMS)
        assert sorted(entry["robust_ranking"]) == ["ata", "moma", "tgp"]
        for alg in entry["algorithms"].values():
            assert alg["curve_rounds"][-1] == 40
            assert all(b >= a - 1e-9 for a, b in itertools.pairwise(alg["curve_mean"]))
    names = harness.RunStore(tmp_path / "quick", "zhou_tan_authors").names()
    assert len([n for n in names if n.endswith("random")]) == 4  # 2 objectives x 2 settings


def test_zhou_tan_authors_objective_and_code_widths_follow_the_authors_code():
    from benchmarks import zhou_tan, zhou_tan_authors
    from privtune.kernels import SE

    f = zhou_tan.make_objective(SE(0.2), np.random.default_rng(0), "authors")
    assert np.max(np.abs(f)) == pytest.approx(1.0)
    classes, overrides = zhou_tan_authors.code_parameters(1000)
    tgp = classes["tgp"](1, B=1.0, v=4.0, **overrides["tgp"])
    tgp.tell(np.array([0.5]), 0.3)
    # Round 2: B sqrt(lam) + b_2 sqrt(ln 2), b_2 = 2^{1/4} v^{1/2}.
    assert tgp.beta == pytest.approx(1.0 + 2**0.25 * 2.0 * math.sqrt(math.log(2)))
    assert overrides["ata"]["q"] == pytest.approx(math.log(1000) / 0.01)


def test_tuning_suite_quick_mode_scores_each_family_against_random_search(tmp_path):
    from benchmarks import tuning_suite

    result = tuning_suite.main(["--quick", "--out", str(tmp_path)])
    runs = harness.load_runs(harness.RunStore(tmp_path / "quick", "tuning_suite"))
    # plateau: 2 settings; heavy: exact only; 2 methods, 2 seeds
    assert len(runs) == (2 + 1) * 2 * 2
    for run in runs:
        assert set(run["picks"]) == {"4", "8"} and len(run["true_values"]) == 8
        # a replay is exact only under the same versions and BLAS kernel: each run records them
        assert run["versions"]["numpy"] == np.__version__
        assert run["versions"]["optuna"] == optuna.__version__
        for lib in threadpoolctl.threadpool_info():
            if lib.get("user_api") == "blas":
                for key in ("internal_api", "version", "architecture"):
                    assert str(lib.get(key) or "") in run["versions"]["blas"]
    summary = result["summary"]
    assert set(summary) == {"plateau|none", "plateau|10", "heavy|none"}
    for out in summary.values():
        # random search is the zero of the normalised score, by construction
        budget = out["budgets"]["8"]
        assert abs(budget["score"]["random"]) < 1e-9
        # over complete seeds the seed-level family score averages to the table's score
        for m, fs in budget["family_score"].items():
            assert fs["seeds"] == 2 and fs["mean"] == pytest.approx(budget["score"][m])
        # paired differences are antisymmetric
        ab, ba = budget["versus"]["privtune"]["random"], budget["versus"]["random"]["privtune"]
        assert ab["seeds"] == 2 and ab["mean"] == pytest.approx(-ba["mean"])
        assert set(budget["behind"]) == {"privtune", "random"}
        # trapped: the pick below random search's median pick, so at most half of random's
        trapped = budget["trapped"]
        assert (
            trapped["random"]["studies"] == trapped["privtune"]["studies"] == 2 * len(out["tasks"])
        )
        assert trapped["random"]["trapped"] <= trapped["random"]["studies"] // 2
        for m, cell in trapped.items():
            assert cell["trapped"] == len(cell["where"])
            for where in cell["where"]:
                task, seed = where.rsplit(":", 1)
                pick = next(
                    r["picks"]["8"]["true"]
                    for r in runs
                    if r["task"] == task
                    and r["method"] == m
                    and r["seed"] == int(seed)
                    and r["setting"] == out_setting(out, summary)
                )
                median = np.median(
                    [
                        r["picks"]["8"]["true"]
                        for r in runs
                        if r["task"] == task
                        and r["method"] == "random"
                        and r["setting"] == out_setting(out, summary)
                    ]
                )
                assert pick < median
    assert "regret_vs_random" in summary["heavy|none"]["budgets"]["8"]
    assert (tmp_path / "quick" / "tuning_suite.png").stat().st_size > 0


def test_tuning_suite_trace_replays_a_stored_study_and_finds_where_it_departs(
    tmp_path, capsys, monkeypatch
):
    import json

    from benchmarks import tuning_suite

    tuning_suite.main(["--quick", "--out", str(tmp_path)])
    written = sorted(p.name for p in (tmp_path / "quick").iterdir())
    argv = ["trace", "--out", str(tmp_path / "quick"), "--tasks", "branin_t2", "--methods",
            "privtune", "--seeds", "1", "--settings", "none"]  # fmt: skip
    capsys.readouterr()
    assert tuning_suite.main(argv) is None
    out = json.loads(capsys.readouterr().out)
    assert sorted(p.name for p in (tmp_path / "quick").iterdir()) == written  # no summary
    assert out["run"] == "branin_t2-none-privtune-1" and out["departs_at"] is None
    assert out["picks"]["replay"] == out["picks"]["stored"]
    assert [t["number"] for t in out["trials"]] == list(range(8))
    assert all(set(t["params"]) == {"x0", "x1"} for t in out["trials"])
    assert out["trials"][0]["turn"] == "start-up"  # what made each proposal
    assert all(isinstance(t["turn"], str) for t in out["trials"])
    # a stored study that differs from its replay at trial 5 is found there
    runs = harness.load_runs(harness.RunStore(tmp_path / "quick", "tuning_suite"))
    for r in runs:
        r["true_values"][5] = -1e9
    monkeypatch.setattr(harness, "load_runs", lambda store: runs)
    tuning_suite.main(argv)
    assert json.loads(capsys.readouterr().out)["departs_at"] == 5
    with pytest.raises(SystemExit, match="--seeds must name exactly one"):
        tuning_suite.main([*argv[:-4], "--seeds", "0", "1", "--settings", "none"])


def test_tuning_suite_coco_functions_have_their_optimum_zero_at_the_drawn_point():
    """Each BBOB-style function is 0 at its instance's optimum (``x_opt``, the first peak of
    Gallagher's) and below 0 at random points of the cube; its task's noise is Student-t with
    a fixed scale, so two evaluations at one point differ and the credited value does not."""
    from benchmarks import tuning_suite

    rng = np.random.default_rng(0)
    for fid in (1, 6, 8, 10, 15, 17, 21, 22):
        for d in (2, 5):
            fn = tuning_suite._coco(fid, d)
            x_opt = np.random.default_rng([fid, d]).uniform(-4.0, 4.0, d)
            x_opt *= 0.75 if fid == 8 else 1.0
            assert fn((x_opt + 5.0) / 10.0) == pytest.approx(0.0, abs=1e-9)
            assert max(fn(u) for u in rng.random((200, d))) < 0.0
            task = tuning_suite.TASKS[f"coco_f{fid}_{d}d_t2"]
            family = "coco" if fid in (1, 8, 15, 21) else "coco_holdout"
            assert task.family == family and task.best == 0.0
            params = {f"x{i}": 0.5 for i in range(d)}
            (a, true_a), (b, true_b) = (
                task.evaluate(params, 0, np.random.default_rng(k)) for k in (1, 2)
            )
            assert true_a == true_b == fn(np.full(d, 0.5)) and a != b
    with pytest.raises(ValueError, match="fid"):
        tuning_suite._coco(2, 2)


def test_tuning_suite_counts_traps_and_those_at_the_seeds_floor():
    from benchmarks import tuning_suite

    def run(method, seed, pick, told):
        return {"task": "knn_digits", "method": method, "seed": seed, "true_values": told,
                "picks": {"2": {"true": pick}}}  # fmt: skip

    group = [
        # random search's picks 0.90, 0.95, 0.97: its median pick 0.95
        run("random", 0, 0.90, [0.90, 0.88]),
        run("random", 1, 0.95, [0.95, 0.80]),
        run("random", 2, 0.97, [0.97, 0.96]),
        # seed 0: below the median, and no study told more than 0.92 in two trials (its third,
        # 0.99, is past the budget): a trap at the seed's floor
        run("a", 0, 0.92, [0.90, 0.92, 0.99]),
        # seed 1: below the median where random search told 0.95: a trap of the search
        run("a", 1, 0.94, [0.94, 0.93]),
        run("a", 2, 0.97, [0.97, 0.90]),
    ]
    out = tuning_suite._trapped(group, ["a", "random"], ["knn_digits"], "2")
    assert out["a"] == {
        "trapped": 2, "floor": 1, "studies": 3, "where": ["knn_digits:0", "knn_digits:1"]
    }  # fmt: skip
    assert out["random"]["trapped"] == 1 and out["random"]["floor"] == 1


def test_tuning_suite_bootstraps_the_seeds_for_a_difference_of_mean_ranks():
    from benchmarks import tuning_suite

    def run(task, method, seed, pick):
        return {"task": task, "method": method, "seed": seed, "picks": {"2": {"true": pick}}}

    tasks = ["knn_digits", "tree_breast_cancer"]

    def versus(picks, methods=("a", "b")):
        group = [run(t, m, s, p) for (t, m), per_seed in picks.items() for s, p in per_seed]
        return tuning_suite._rank_versus(group, list(methods), tasks, "2")["a"]["b"]

    # a ahead on every seed of both tasks: every replicate ranks it first, no spread
    ahead = {(t, m): [(s, 0.9 if m == "a" else 0.8) for s in range(5)] for t in tasks for m in "ab"}
    assert versus(ahead) == {"difference": -1.0, "se": 0.0, "opposite": 0.0, "seeds": 5}
    # on the tree, a ahead on seeds 0 and 1 by 0.5 and behind on the other three by 0.1: it
    # ranks second exactly in the replicates that draw neither seed 0 nor 1 (probability
    # p = 0.6^5), where the difference is 0 instead of -1, so its standard deviation is
    # sqrt(p (1 - p)); 2,000 replicates estimate it within about 0.01 (0.03 allowed), and p,
    # the share on the other side of zero, within about 0.006 (0.02 allowed)
    mixed = dict(ahead)
    mixed["tree_breast_cancer", "a"] = [(0, 0.9), (1, 0.9), (2, 0.7), (3, 0.7), (4, 0.7)]
    mixed["tree_breast_cancer", "b"] = [(0, 0.4), (1, 0.4), (2, 0.8), (3, 0.8), (4, 0.8)]
    out = versus(mixed)
    p = 0.6**5
    assert out["difference"] == -1.0 and abs(out["se"] - np.sqrt(p * (1 - p))) < 0.03, out
    assert abs(out["opposite"] - p) < 0.02, out
    # a method without a pick on one task is left out; the others are still compared
    partial = {**ahead, ("knn_digits", "c"): [(s, 0.95) for s in range(5)]}
    assert versus(partial, "abc") == versus(ahead)
    # a seed one method lacks is not drawn; ties share their rank
    tied = {(t, m): [(s, 0.9) for s in range(5 if m == "a" else 4)] for t in tasks for m in "ab"}
    assert versus(tied) == {"difference": 0.0, "se": 0.0, "opposite": None, "seeds": 4}


def test_tuning_suite_counts_studies_short_of_half_way_and_tests_the_counts():
    from scipy.stats import fisher_exact

    from benchmarks import tuning_suite

    def run(method, seed, pick):
        return {
            "task": "knn_digits",
            "method": method,
            "seed": seed,
            "picks": {"2": {"true": pick}},
        }

    # random search's mean loss 0.10 and the best known loss 0.02: half way is a loss of 0.06,
    # an accuracy of 0.94
    scales = {"knn_digits": (0.10, 0.02)}
    group = [run("a", 0, 0.93), run("a", 1, 0.95), run("a", 2, 0.9401), run("b", 0, 0.98)]
    out = tuning_suite._short(group, ["a", "b"], scales, "2")
    assert out["a"] == {"short": 1, "studies": 3, "per_task": {"knn_digits": 1}}
    assert out["b"] == {"short": 0, "studies": 1, "per_task": {}}
    # a task random search already solves (no spread) has no study short of half way
    flat = tuning_suite._short(group, ["a", "b"], {"knn_digits": (0.02, 0.02)}, "2")
    assert flat["a"]["short"] == 0 and flat["a"]["studies"] == 3
    # the test is scipy's two-sided Fisher exact test of the two 2x2 counts
    a, b = {"trapped": 11, "studies": 200}, {"trapped": 3, "studies": 200}
    assert tuning_suite._fisher(a, b, "trapped") == pytest.approx(
        fisher_exact([[11, 189], [3, 197]])[1]
    )
    assert 0.05 < tuning_suite._fisher(a, b, "trapped") < 0.06
    assert tuning_suite._fisher(a, {"trapped": 0, "studies": 0}, "trapped") is None


def test_tuning_suite_names_the_defaults_runs_and_keeps_common_seeds():
    from benchmarks import tuning_suite

    def row(family, method, seed=0, task="t", setting="none"):
        return {"family": family, "method": method, "seed": seed, "task": task, "setting": setting}

    names = ["default", "share", "cube", "spread", "top", "previous"]
    assert tuning_suite._aliased(row("heavy", "privtune:SPX"), names)["method"] == "default"
    assert tuning_suite._aliased(row("heavy", "privtune:SPA"), names)["method"] == "spread"
    assert tuning_suite._aliased(row("heavy", "privtune:AR"), names)["method"] == "top"
    assert tuning_suite._aliased(row("heavy", "privtune:KP2"), names)["method"] == "previous"
    assert tuning_suite._aliased(row("classic", "privtune:TRM"), names)["method"] == "default"
    assert tuning_suite._aliased(row("classic", "privtune:TR2"), names)["method"] == "share"
    assert tuning_suite._aliased(row("classic", "privtune:A1"), names)["method"] == "cube"
    assert tuning_suite._aliased(row("classic", "privtune:SP"), names)["method"] == "spread"
    assert tuning_suite._aliased(row("classic", "privtune:KP"), names)["method"] == "top"
    assert tuning_suite._aliased(row("ridge", "privtune"), names)["method"] == "top"
    # an alias not asked for keeps the run's own name
    assert tuning_suite._aliased(row("classic", "privtune:KP"), ["default"])["method"] == (
        "privtune:KP"
    )
    # under privacy the default's runs are privtune's; a variant keeps its name
    assert tuning_suite._aliased(row("unseen", "privtune", setting="10"), names)["method"] == (
        "default"
    )
    assert tuning_suite._aliased(row("classic", "privtune:SP5"), names)["method"] == "privtune:SP5"
    # seed 1 lacks gp's run of task u: only seed 0 is common to every method and task
    group = [row("f", m, s, t) for m in ("a", "gp") for s in (0, 1) for t in ("t", "u")]
    group = [r for r in group if not (r["method"] == "gp" and r["seed"] == 1 and r["task"] == "u")]
    assert {r["seed"] for r in tuning_suite._common_seeds(group)} == {0}
    assert len(tuning_suite._common_seeds(group)) == 4
    # a method without one complete seed is left out, not the family
    group += [row("f", "hebo", 0, "t")]
    assert {r["method"] for r in tuning_suite._common_seeds(group)} == {"a", "gp"}


def out_setting(out: dict, summary: dict) -> str:
    """The setting of one family's summary (its key ``family|setting``)."""
    return next(k for k, v in summary.items() if v is out).split("|")[1]


def test_ablation_quick_mode_runs_both_ends_of_the_road(tmp_path):
    from benchmarks import ablation

    result = ablation.main(["--quick", "--out", str(tmp_path)])
    assert set(result["table"]) == {"P", "G"}
    for row in result["table"].values():
        assert 0.0 < row["best"] <= 1.0 and 0 <= row["at_corner"] <= row["n"] == 1
    # the two ends differ in every part
    configs = ablation.configurations()
    for part in ablation.GPSAMPLER_PARTS:
        assert ablation._merge([part]) != configs["P"]


def test_acquisition_gap_quick_mode_compares_every_model_guided_proposal(tmp_path):
    from benchmarks import acquisition_gap

    result = acquisition_gap.main(["--quick", "--out", str(tmp_path)])
    assert (tmp_path / "quick" / "acquisition_gap.png").stat().st_size > 0
    saved = json.loads((tmp_path / "quick" / "acquisition_gap.json").read_text())
    assert saved["results"] == result["results"]
    runs = result["results"]["plateau_synthetic-0"]
    assert set(runs) == set(acquisition_gap.VARIANTS)
    for run in runs.values():
        assert run["steps"], "the study made model-guided proposals"
        for step in run["steps"]:
            # on this smooth plateau both searches end at the same maxima (gaps within 0.001,
            # measured); 0.05 is the tolerance for L-BFGS-B ending a little apart
            assert step["gap"] > -0.05
            assert 0 <= step["on_bounds"] <= 6
        assert run["misses"] == sum(s["gap"] > acquisition_gap.MISS for s in run["steps"])
