"""Tests for benchmarks.datasets: shapes and labels of the benchmark datasets."""

import numpy as np
import pytest

from benchmarks.datasets import DATA_DIR, DATASETS, load_dataset


@pytest.mark.parametrize(
    ("name", "shape", "n_positive"),
    [
        ("australian", (690, 14), 307),
        ("pima", (768, 8), 268),
        ("diabetes", (768, 8), 268),
        ("breast_cancer", (569, 30), 357),
    ],
)
def test_binary_datasets_have_the_documented_shape_and_0_1_labels(name, shape, n_positive):
    X, y = load_dataset(name)
    assert X.shape == shape
    assert X.dtype == np.float64
    assert np.isfinite(X).all()
    assert y.shape == (shape[0],)
    assert y.dtype == np.int64
    assert set(np.unique(y).tolist()) == {0, 1}
    assert int(y.sum()) == n_positive


def test_pima_marks_tested_positive_as_one():
    lines = (DATA_DIR / "pima.dat").read_text().splitlines()
    expected = [1 if line.endswith(",tested_positive") else 0 for line in lines]
    _, y = load_dataset("pima")
    assert y.tolist() == expected


def test_wine_has_three_classes():
    X, y = load_dataset("wine")
    assert X.shape == (178, 13)
    assert np.unique(y).tolist() == [0, 1, 2]


def test_every_listed_name_loads_and_unknown_names_are_rejected():
    for name in DATASETS:
        load_dataset(name)
    with pytest.raises(ValueError, match="unknown dataset 'iris'"):
        load_dataset("iris")
