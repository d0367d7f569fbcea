import itertools

import numpy as np
import pytest

from privtune.features import (
    NystromEmbedding,
    QuadratureFourierFeatures,
    RandomFourierFeatures,
    ridge_leverage_sample,
)
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


# -- Fourier features (Dubey 2021, Def. 4 and Theorem 2) --------------------------------------


def _grid(d, k):
    g = np.linspace(0.0, 1.0, k)
    return np.stack(np.meshgrid(*[g] * d), -1).reshape(-1, d)


@pytest.mark.parametrize(("dim", "lengthscale"), [(1, 0.3), (2, 1.0), (2, 0.5), (3, 0.7)])
@pytest.mark.parametrize("m_bar", [2, 3, 4, 6, 8])
def test_qff_sup_error_on_a_grid_is_below_theorem_2(dim, lengthscale, m_bar):
    if 2 * m_bar**dim > 2048:
        pytest.skip("too many features for a unit test")
    q = QuadratureFourierFeatures(dim, m_bar, lengthscale)
    X = _grid(dim, {1: 201, 2: 21, 3: 9}[dim])
    P = q(X)
    err = np.abs(P @ P.T - q.kernel(X, X)).max()
    assert err <= q.error_bound()
    np.testing.assert_allclose(np.linalg.norm(P, axis=1), 1.0)  # ||Phi(x)|| = 1
    assert q.n_features == 2 * m_bar**dim


def test_qff_error_decays_exponentially_in_m_bar():
    X = _grid(2, 21)
    errs = []
    for m_bar in (2, 4, 6, 8):
        q = QuadratureFourierFeatures(2, m_bar, 1.0)
        P = q(X)
        errs.append(np.abs(P @ P.T - q.kernel(X, X)).max())
    assert all(b < a / 10 for a, b in itertools.pairwise(errs))


def test_additive_qff_approximates_the_additive_kernel_in_20_dimensions():
    q = QuadratureFourierFeatures(20, 10, 0.5, additive=True)
    assert q.n_features == 2 * 10 * 20
    Z = np.random.default_rng(0).random((60, 20))
    P = q(Z)
    err = np.abs(P @ P.T - q.kernel(Z, Z)).max()
    assert err <= q.error_bound()  # the mean of per-coordinate errors, each within the bound
    np.testing.assert_allclose(np.linalg.norm(P, axis=1), 1.0)


def test_rff_error_shrinks_with_more_frequencies():
    X = _grid(2, 11)
    errs = []
    for n in (50, 5000):
        r = RandomFourierFeatures(2, n, 1.0, seed=0)
        P = r(X)
        np.testing.assert_allclose(np.linalg.norm(P, axis=1), 1.0)
        errs.append(np.abs(P @ P.T - r.kernel(X, X)).max())
    # O(n^{-1/2}): 100 times the frequencies, about a tenth of the error (a third is asserted)
    assert errs[1] < errs[0] / 3
    assert RandomFourierFeatures(3, 8, additive=True, seed=0).n_features == 2 * 8 * 3


def test_fourier_feature_bad_input():
    with pytest.raises(ValueError, match=r"m_bar\^dim = 2199023255552 features.*additive=True"):
        QuadratureFourierFeatures(20, 4)
    with pytest.raises(ValueError, match="m_bar must be an integer >= 1"):
        QuadratureFourierFeatures(2, 0)
    with pytest.raises(ValueError, match="lengthscale must be > 0"):
        QuadratureFourierFeatures(2, 3, lengthscale=[1.0, -1.0])
    with pytest.raises(ValueError, match="X must have 2 columns"):
        QuadratureFourierFeatures(2, 3)(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="n_frequencies must be an integer >= 1"):
        RandomFourierFeatures(2, 0)
