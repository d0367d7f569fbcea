import math

import numpy as np
import pytest

from privtune.kernels import SE, Matern, fit_lengthscale, make_kernel

KERNELS = [SE(0.2), Matern(0.2, nu=0.5), Matern(0.2, nu=1.5), Matern(0.2, nu=2.5)]


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
def test_kernel_has_unit_variance_and_is_psd(kernel):
    X = np.random.default_rng(0).random((40, 3))
    K = kernel(X)
    np.testing.assert_allclose(np.diag(K), 1.0)
    np.testing.assert_allclose(kernel.diag(X), 1.0)
    np.testing.assert_allclose(K, K.T)
    assert np.linalg.eigvalsh(K).min() > -1e-10


def test_kernel_closed_forms_at_a_known_distance():
    x, y = np.array([[0.0]]), np.array([[0.3]])
    ls, s = 0.2, 0.3
    assert SE(ls)(x, y)[0, 0] == pytest.approx(math.exp(-(s**2) / (2 * ls**2)))
    assert Matern(ls, 0.5)(x, y)[0, 0] == pytest.approx(math.exp(-s / ls))
    r = math.sqrt(3) * s / ls
    assert Matern(ls, 1.5)(x, y)[0, 0] == pytest.approx((1 + r) * math.exp(-r))
    r = math.sqrt(5) * s / ls
    assert Matern(ls, 2.5)(x, y)[0, 0] == pytest.approx((1 + r + r * r / 3) * math.exp(-r))


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf")])
def test_lengthscale_must_be_positive_and_finite(bad):
    with pytest.raises(ValueError, match="lengthscale"):
        SE(bad)


def test_matern_rejects_other_smoothness():
    with pytest.raises(ValueError, match="nu must be one of"):
        Matern(0.2, nu=2.0)


def test_unknown_kernel_parameters_and_names_are_rejected():
    with pytest.raises(TypeError, match="nu"):
        SE(lengthscale=0.2, nu=2.5)
    with pytest.raises(ValueError, match="kernel must be"):
        make_kernel("cosine")
    assert make_kernel("matern32", 0.3) == Matern(0.3, nu=1.5)


def test_ml2_recovers_the_lengthscale_of_a_gp_sample():
    # A draw from a GP with l = 0.1 observed with small noise: the ML-II estimate should be
    # within a factor of 2 of the truth (likelihood is flat-ish in l, so no tighter claim).
    rng = np.random.default_rng(3)
    X = np.sort(rng.random(80))[:, None]
    K = SE(0.1)(X) + 1e-8 * np.eye(80)
    f = np.linalg.cholesky(K) @ rng.standard_normal(80)
    y = f + 0.05 * rng.standard_normal(80)
    fitted = fit_lengthscale(SE(0.5), X, y, lam=0.05**2)
    assert 0.05 < fitted.lengthscale < 0.2


def test_the_ard_kernel_gradient_matches_central_differences():
    from privtune.cube import Block
    from privtune.kernels import ARDMatern52

    layout = (Block(0, 1), Block(1, 3, "categorical"), Block(3, 4))
    k = ARDMatern52((0.3, 0.7, 1.5), layout)
    rng = np.random.default_rng(0)
    X, z = rng.random((6, 4)), rng.random(4)
    value, grad = k.value_and_grad(z, X)
    assert np.allclose(value, k(z[None, :], X)[0], atol=1e-14)
    h = 1e-6
    for d in range(4):
        e = np.zeros(4)
        e[d] = h
        fd = (k((z + e)[None, :], X)[0] - k((z - e)[None, :], X)[0]) / (2 * h)
        assert np.allclose(grad[:, d], fd, atol=1e-7)
    warped = ARDMatern52((0.3,), (Block(0, 1),), ((2.0, 1.0),))
    assert warped.value_and_grad(z[:1], X[:, :1]) is None
