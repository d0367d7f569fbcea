"""The import graph keeps the layers docs/architecture.md names, and the libraries each may use."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "privtune"

# docs/architecture.md, "Layers": bottom up, each module's layer (a package: every module in it)
LAYERS = {
    "checks": ["privtune._checks"],
    "math": [
        "privtune.cube",
        "privtune.kernels",
        "privtune.features",
        "privtune.gp",
        "privtune.acquisition",
        "privtune.forest",
        "privtune.parametric",
    ],
    "privacy": ["privtune.privacy"],
    "algorithms": ["privtune.optimizers"],
    "engine": [
        "privtune.registry",
        "privtune.space",
        "privtune.tuning",
        "privtune.batch",
        "privtune.plan",
        "privtune.record_choice",
        "privtune.scores",
        "privtune.records",
        "privtune.private_models",
        "privtune._display",
    ],
    "federated": ["privtune.federated"],
    "adapters": [
        "privtune.optuna",
        "privtune.optuna_privacy",
        "privtune.optuna_pick",
        "privtune.sklearn",
        "privtune._sklearn_compat",
        "privtune.presets",
    ],
    "package": ["privtune"],
}
ORDER = list(LAYERS)
# the libraries besides the standard library each layer may import (the adapters: any)
LIBRARIES = {
    "checks": {"numpy"},
    "math": {"numpy", "scipy", "threadpoolctl"},
    "privacy": {"numpy", "scipy", "dp_accounting", "opendp", "matplotlib"},
    "algorithms": {"numpy", "scipy"},
    "engine": {"numpy", "scipy"},
    "federated": {"numpy", "scipy", "sklearn", "joblib"},
    "package": set(),
}
# the engine's exceptions, one library each: scikit-learn's scorer ranges, record metrics and
# hold-out split; Optuna's distributions, converted inside the space's to_optuna methods
ENGINE_EXCEPTIONS = {
    "privtune.scores": "sklearn",
    "privtune.records": "sklearn",
    "privtune.private_models": "sklearn",
}
ENGINE_EXCEPTIONS["privtune.space"] = "optuna"
# the one module of the math layer the privacy layer reads (baseline_level)
PRIVACY_READS_FROM_MATH = {"privtune.acquisition"}
STDLIB = set(sys.stdlib_module_names) | {"__future__"}


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


def layer_of(name: str) -> str | None:
    """The layer of module ``name`` (the longest prefix of ``LAYERS`` it belongs to)."""
    best, found = -1, None
    for layer, prefixes in LAYERS.items():
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), layer
    return found


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _internal(name: str) -> set[str]:
    """The privtune modules ``name`` imports, as modules that exist."""
    out = set()
    for m in imports(MODULES[name]):
        while m and m not in MODULES:
            m = m.rpartition(".")[0]
        if m.startswith("privtune") and m != name:
            out.add(m)
    return out


def test_the_package_is_read():
    assert {"privtune.sklearn", "privtune.optuna", "privtune.gp"} <= set(MODULES)
    assert "privtune.scores" in _internal("privtune.federated.search")


def test_every_module_has_a_layer():
    assert not [n for n in MODULES if layer_of(n) is None]


def test_the_space_imports_optuna_inside_functions_only():
    tree = ast.parse(MODULES["privtune.space"].read_text())
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not [n for n in top if "optuna" in ast.dump(n)]
    inside = [
        n
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef)
        for n in ast.walk(f)
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("optuna")
    ]
    assert inside  # the conversions are read


@pytest.mark.parametrize("name", sorted(n for n in MODULES if layer_of(n) == "privacy"))
def test_the_privacy_layer_reads_one_module_of_the_math_layer(name):
    math = {m for m in _internal(name) if layer_of(m) == "math"}
    assert math <= PRIVACY_READS_FROM_MATH, f"{name} imports {sorted(math)}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_down_or_sideways(name):
    mine = ORDER.index(layer_of(name))
    up = {m: layer_of(m) for m in _internal(name) if ORDER.index(layer_of(m)) > mine}
    assert not up, f"{name} ({layer_of(name)}) imports the higher layer(s) {up}"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if layer_of(n) != "adapters"))
def test_each_layer_imports_only_its_libraries(name):
    allowed = LIBRARIES[layer_of(name)] | {"privtune"} | STDLIB
    if name in ENGINE_EXCEPTIONS:
        allowed = allowed | {ENGINE_EXCEPTIONS[name]}
    outside = {m.split(".")[0] for m in imports(MODULES[name])} - allowed
    assert not outside, f"{name} ({layer_of(name)}) imports {sorted(outside)}"


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
