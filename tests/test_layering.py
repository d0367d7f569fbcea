"""The import graph keeps its layers: nothing below the adapters imports one."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "privtune"
ADAPTERS = {
    "privtune.sklearn",
    "privtune.optuna",
    "privtune.optuna_pick",
    "privtune.optuna_privacy",
}
# the math layer: numpy and scipy only, besides privtune itself
MATH = (
    "privtune.optimizers",
    "privtune.gp",
    "privtune.kernels",
    "privtune.features",
    "privtune.cube",
    "privtune.acquisition",
    "privtune.parametric",
)


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in the file (inside functions too), absolute."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def test_the_package_is_read():
    assert {"privtune.sklearn", "privtune.optuna", "privtune.gp"} <= set(MODULES)
    assert "privtune.scores" in imports(MODULES["privtune.federated.search"])


@pytest.mark.parametrize("name", sorted(set(MODULES) - ADAPTERS - {"privtune"}))
def test_no_module_below_the_adapters_imports_one(name):
    reached = {
        m for m in imports(MODULES[name]) if any(m == a or m.startswith(a + ".") for a in ADAPTERS)
    }
    assert not reached, f"{name} imports the adapter(s) {sorted(reached)}"


# the standard library, and threadpoolctl (a declared dependency: the GP fit limits BLAS threads)
ALLOWED = {"privtune", "numpy", "scipy", "threadpoolctl", "__future__"}
STDLIB = {"abc", "collections", "copy", "dataclasses", "enum", "functools", "itertools", "math"}
STDLIB |= {"numbers", "threading", "typing", "warnings", "zlib"}


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n.startswith(MATH)))
def test_the_math_layer_needs_numpy_and_scipy_only(name):
    outside = {m.split(".")[0] for m in imports(MODULES[name])} - ALLOWED - STDLIB
    assert not outside, f"{name} imports {sorted(outside)}"


def test_import_privtune_leaves_the_adapters_libraries_unloaded():
    # Optuna, dp-accounting, scikit-learn's search and scipy.stats load on first use
    code = (
        "import sys, privtune\n"
        "heavy = ['optuna', 'dp_accounting', 'sklearn', 'scipy.stats']\n"
        "print([m for m in heavy if m in sys.modules])\n"
        "privtune.PrivateGPUCBSampler, privtune.PrivateBOSearchCV\n"
        "print(all(m in sys.modules for m in ['optuna', 'sklearn']))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[0] == "[]" and out[1] == "True"


@pytest.mark.parametrize("name", ["privtune.tuning", "privtune.registry"])
def test_the_engine_imports_neither_optuna_nor_scikit_learn(name):
    found = imports(MODULES[name])
    assert not [m for m in found if m.split(".")[0] in ("optuna", "sklearn")]
    assert not found & ADAPTERS


# privtune.privacy, bottom up: checks and errors -> accounting -> mechanisms -> modes
PRIVACY_LAYERS = {
    "errors": 0,
    "withhold": 0,
    "ledger": 1,
    "receipts": 1,
    "composition": 1,
    "units": 1,
    "claims": 1,
    "accounting": 1,
    "curator": 2,
    "gaussian": 2,
    "noise": 2,
    "oneshot": 2,
    "seeds": 2,
    "budget": 3,
    "selection": 3,
    "release": 3,
}
PRIVACY = {n: p for n, p in MODULES.items() if n.startswith("privtune.privacy.")}


def _privacy_imports(name: str) -> set[str]:
    """The privacy modules ``name`` imports (functions and ``TYPE_CHECKING`` blocks included)."""
    found = set()
    for m in imports(MODULES[name]):
        parts = m.split(".")
        if len(parts) >= 3 and parts[:2] == ["privtune", "privacy"] and parts[2] in PRIVACY_LAYERS:
            found.add(parts[2])
    return found - {name.rsplit(".", 1)[1]}


def test_every_privacy_module_has_a_layer():
    assert {n.rsplit(".", 1)[1] for n in PRIVACY} == set(PRIVACY_LAYERS)


@pytest.mark.parametrize("name", sorted(PRIVACY))
def test_privacy_imports_point_down(name):
    layer = PRIVACY_LAYERS[name.rsplit(".", 1)[1]]
    up = {m for m in _privacy_imports(name) if PRIVACY_LAYERS[m] > layer}
    assert not up, f"{name} (layer {layer}) imports the higher layer(s) {sorted(up)}"


def test_the_privacy_package_has_no_import_cycle():
    graph = {n.rsplit(".", 1)[1]: _privacy_imports(n) for n in PRIVACY}
    done: set[str] = set()

    def visit(node: str, path: tuple[str, ...]) -> None:
        assert node not in path, f"import cycle: {' -> '.join((*path, node))}"
        if node in done:
            return
        for nxt in graph[node]:
            visit(nxt, (*path, node))
        done.add(node)

    for node in graph:
        visit(node, ())
