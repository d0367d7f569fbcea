import numpy as np
import pytest

from privtune.features import NystromEmbedding, ridge_leverage_sample
from privtune.kernels import SE, Matern


@pytest.mark.parametrize("kernel", [SE(0.2), Matern(0.3, nu=2.5)], ids=repr)
def test_nystrom_is_exact_on_its_dictionary(kernel):
    X = np.random.default_rng(0).random((30, 2))
    emb = NystromEmbedding(kernel, X)
    Phi = emb.transform(X)
    assert emb.m == 30 and Phi.shape == (30, 30)
    np.testing.assert_allclose(Phi @ Phi.T, kernel(X), atol=1e-6)


def test_nystrom_pseudo_inverse_handles_duplicate_dictionary_points():
    X = np.random.default_rng(1).random((10, 1))
    D = np.vstack([X, X[:4]])  # repeated plays put the same point in the dictionary twice
    emb = NystromEmbedding(SE(0.2), D)
    assert emb.m == 14
    Phi = emb.transform(X)
    np.testing.assert_allclose(Phi @ Phi.T, SE(0.2)(X), atol=1e-6)


def test_nystrom_feature_map_is_the_pseudo_inverse_root_formula():
    kernel = SE(0.25)
    D = np.random.default_rng(2).random((6, 2))
    x = np.random.default_rng(3).random((4, 2))
    s, U = np.linalg.eigh(kernel(D))
    root_pinv = U @ np.diag(1 / np.sqrt(s)) @ U.T
    expected = (root_pinv @ kernel(D, x)).T
    np.testing.assert_allclose(NystromEmbedding(kernel, D).transform(x), expected, atol=1e-8)


def test_empty_dictionary_is_the_zero_map():
    emb = NystromEmbedding(SE(0.2), np.zeros((0, 3)))
    assert emb.m == 0
    assert emb.transform(np.zeros((5, 3))).shape == (5, 0)


def test_ridge_leverage_inclusion_probability_is_min_q_sigma2_one():
    rng = np.random.default_rng(0)
    n = 40_000
    sigma2 = np.concatenate([np.full(n, 0.1), np.full(n, 0.9)])
    idx = ridge_leverage_sample(sigma2, q=3.0, rng=rng)
    low = np.mean(idx < n)  # fraction of all points that are low-variance inclusions
    p_low = np.sum(idx < n) / n
    p_high = np.sum(idx >= n) / n
    # p = min(3 * 0.1, 1) = 0.3 and min(3 * 0.9, 1) = 1; 5 binomial standard errors of slack.
    assert abs(p_low - 0.3) < 5 * np.sqrt(0.3 * 0.7 / n)
    assert p_high == 1.0
    assert 0 < low < 1


def test_ridge_leverage_rejects_nonpositive_q():
    with pytest.raises(ValueError, match="q must be > 0"):
        ridge_leverage_sample(np.ones(3), q=0.0, rng=np.random.default_rng(0))
