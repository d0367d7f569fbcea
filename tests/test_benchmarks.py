import itertools
import json
import math

from benchmarks import zhou_tan


def test_zhou_tan_quick_mode_writes_a_summary_and_a_plot(tmp_path):
    results = zhou_tan.main(["--quick", "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "zhou_tan_quick.json").read_text())
    assert saved["config"]["T"] == 40
    assert (tmp_path / "zhou_tan_quick.png").stat().st_size > 0
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
    assert (tmp_path / "speed_quick.json").exists()
    for alg in speed.ALGORITHMS:
        for row in results["timings"][alg].values():
            assert row["ask_seconds"] >= 0 and row["tell_seconds"] >= 0
