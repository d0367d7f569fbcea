"""The examples a user copies from run as written."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted(
    p
    for p in (Path(__file__).resolve().parents[1] / "examples").glob("*.py")
    if not p.name.startswith("_")  # helpers of the examples
)
#: The examples that need an optional package, and why it may be missing.
NEEDS = {
    "private_model.py": (
        "diffprivlib",
        "it is not installed, or scikit-learn is 1.8 or later, which it does not support "
        '(pip install -e ".[diffprivlib]")',
    ),
}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(path, tmp_path):
    if path.name in NEEDS:
        package, why = NEEDS[path.name]
        reason = f"{path.name} needs {package}, which cannot be imported: {why}"
        pytest.importorskip(package, reason=reason, exc_type=ImportError)
    args = [str(path), "--quick"]  # every example's smoke mode
    if path.name.startswith("search_"):
        args += ["--out", str(tmp_path)]  # the plot goes to tmp_path
    proc = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip()
    if path.name.startswith("search_"):
        assert (tmp_path / f"{path.stem}.png").stat().st_size > 0
