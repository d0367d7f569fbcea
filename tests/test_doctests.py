"""Every module's docstring examples run, as written."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import optuna
import pytest

import privtune

MODULES = sorted(m.name for m in pkgutil.walk_packages(privtune.__path__, "privtune."))


def test_every_module_is_collected():
    assert {"privtune.gp", "privtune.sklearn", "privtune.privacy.accounting"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_run(name):
    module = importlib.import_module(name)
    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=False)
    finally:
        optuna.logging.set_verbosity(verbosity)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed"
    # a module whose source shows an example runs at least one
    source = module.__loader__.get_source(name) or ""
    assert (">>> " in source) <= (result.attempted > 0)
