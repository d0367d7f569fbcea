"""Datasets of the tuning benchmarks, loaded as numpy arrays.

The GO-UCB paper tunes classifiers on Breast-cancer, Australian and Diabetes (UCI). Breast
cancer and wine come from scikit-learn; Australian and Pima Indians Diabetes are read from the
KEEL copies in ``benchmarks/data`` (see the README there for their provenance and quirks).

Notation
--------
X: features with the shape of (n_samples, n_features), float64.
y: class labels with the shape of (n_samples,), int64.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["DATASETS", "DATA_DIR", "LARGE", "load_dataset"]

DATA_DIR = Path(__file__).resolve().parent / "data"

#: The larger UCI classification sets (KEEL copies; thousands of validation records for the
#: record-level privacy benchmark): name -> (rows, features, classes).
LARGE = {
    "magic": (19020, 10, 2),
    "penbased": (10992, 16, 10),
    "optdigits": (5620, 64, 10),
    "phoneme": (5404, 5, 2),
    "spambase": (4597, 57, 2),
}

DATASETS = ("breast_cancer", "wine", "australian", "pima", "diabetes", *LARGE)
"""Names accepted by :func:`load_dataset`; ``"diabetes"`` is another name for ``"pima"``."""

_PIMA_LABELS = {"tested_negative": 0, "tested_positive": 1}


def load_dataset(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Load a benchmark dataset.

    Parameters
    ----------
    name : str
        ``"breast_cancer"`` (569 x 30, binary) or ``"wine"`` (178 x 13, three classes) from
        scikit-learn; ``"australian"`` (690 x 14, binary) or ``"pima"``, also called
        ``"diabetes"`` (768 x 8, binary) from ``benchmarks/data``; the larger sets of
        :data:`LARGE` (``"magic"``, ``"penbased"``, ``"optdigits"``, ``"phoneme"``,
        ``"spambase"``, 4,597 to 19,020 rows), labels numbered in sorted order of the file's
        class names.

    Returns
    -------
    X : np.ndarray of shape (n_samples, n_features)
        Features as float64, unscaled.
    y : np.ndarray of shape (n_samples,)
        Labels as int64. For Pima, ``tested_positive`` is 1 and ``tested_negative`` is 0; for
        Australian the file's 0 / 1 are kept.

    Raises
    ------
    ValueError
        If ``name`` is unknown or a data file holds an unexpected label.

    Notes
    -----
    "diabetes" here is the Pima Indians Diabetes classification data of the GO-UCB paper, not
    scikit-learn's ``load_diabetes`` (a regression dataset).
    """
    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True)
    elif name == "wine":
        from sklearn.datasets import load_wine

        X, y = load_wine(return_X_y=True)
    elif name == "australian":
        data = np.loadtxt(DATA_DIR / "australian.dat", delimiter=",")
        X, y = data[:, :-1], data[:, -1]
        if not np.isin(y, (0, 1)).all():
            raise ValueError("australian.dat: the class column must hold only 0 and 1.")
    elif name in ("pima", "diabetes"):
        path = DATA_DIR / "pima.dat"
        X = np.loadtxt(path, delimiter=",", usecols=range(8))
        labels = np.loadtxt(path, delimiter=",", usecols=8, dtype=str)
        unexpected = set(labels.tolist()) - _PIMA_LABELS.keys()
        if unexpected:
            raise ValueError(f"pima.dat: unexpected class labels {sorted(unexpected)}.")
        y = np.array([_PIMA_LABELS[label] for label in labels])
    elif name in LARGE:
        rows = [line.split(",") for line in (DATA_DIR / f"{name}.dat").read_text().splitlines()]
        X = np.array([[float(v) for v in r[:-1]] for r in rows])
        labels = [r[-1].strip() for r in rows]
        classes = sorted(set(labels))
        if (len(rows), X.shape[1], len(classes)) != LARGE[name]:
            raise ValueError(f"{name}.dat: expected rows, features, classes {LARGE[name]}.")
        y = np.array([classes.index(label) for label in labels])
    else:
        raise ValueError(f"unknown dataset {name!r}; expected one of {list(DATASETS)}.")
    return np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.int64)
