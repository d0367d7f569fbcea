"""The Gaussian mechanisms of Dubey (2021): the tree-based aggregation and local JDP noise."""

import math

import numpy as np
import pytest

from privtune.privacy.gaussian import (
    TreeAggregation,
    jdp_noise_std,
    local_jdp_noise_std,
    psd_shift,
    symmetric_gaussian,
    tree_depth,
)


def _stream(T, size, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(T):
        v = rng.standard_normal(size)
        out.append(np.outer(v, v))
    return out


def test_prefix_sums_are_exact_without_noise():
    stream = _stream(37, 4, 0)
    tree = TreeAggregation(4, horizon=37, sigma=0.0)
    for t, Z in enumerate(stream, start=1):
        tree.add(Z)
        np.testing.assert_allclose(tree.prefix_sum(), sum(stream[:t]), atol=1e-10)


@pytest.mark.parametrize("T", [1, 2, 7, 8, 100, 1024])
def test_node_counts_stay_within_one_plus_ceil_log2_T(T):
    n = 1 + math.ceil(math.log2(T)) if T > 1 else 1
    assert tree_depth(T) == n
    tree = TreeAggregation(1, horizon=T, sigma=1.0, seed=0)
    for _ in range(T):
        tree.add(np.zeros((1, 1)))
        assert tree.nodes_in_prefix() <= n  # each release sums at most n noisy nodes
    assert tree.node_count.max() <= n  # each element enters at most n nodes
    assert tree.node_count.min() >= 1


def test_the_release_is_data_plus_noise_that_does_not_depend_on_the_data():
    # Same noise seed, two different data streams: the released sums differ by exactly the
    # difference of the data sums, so the noise is independent of the data.
    a, b = _stream(20, 3, 1), _stream(20, 3, 2)
    ta, tb = TreeAggregation(3, 20, 0.7, seed=9), TreeAggregation(3, 20, 0.7, seed=9)
    for t in range(20):
        ta.add(a[t])
        tb.add(b[t])
        noise_a = ta.prefix_sum() - sum(a[: t + 1])
        noise_b = tb.prefix_sum() - sum(b[: t + 1])
        np.testing.assert_allclose(noise_a, noise_b, atol=1e-12)
        np.testing.assert_allclose(noise_a, noise_a.T, atol=1e-12)  # symmetric


def test_node_noise_variance_matches_alg_2():
    # (v + v^T) / sqrt(2) with v_ij ~ N(0, s^2): off-diagonal variance s^2, diagonal 2 s^2;
    # a prefix of t = 7 = 111b sums 3 nodes. 400 trees of 12 x 12: 26 400 off-diagonal and
    # 4 800 diagonal draws; tolerance 5 standard errors of a variance estimate (sqrt(2/k)).
    s, size, reps = 0.5, 12, 400
    off, diag = [], []
    for seed in range(reps):
        tree = TreeAggregation(size, horizon=8, sigma=s, seed=seed)
        for _ in range(7):
            tree.add(np.zeros((size, size)))
        N = tree.prefix_sum()
        iu = np.triu_indices(size, 1)
        off.append(N[iu])
        diag.append(np.diag(N))
    off, diag = np.concatenate(off), np.concatenate(diag)
    for values, want in ((off, 3 * s**2), (diag, 6 * s**2)):
        k = values.size
        assert abs(values.var() / want - 1) < 5 * math.sqrt(2 / k)


def test_symmetric_gaussian_of_alg_3():
    rng = np.random.default_rng(0)
    draws = np.stack([symmetric_gaussian(6, 2.0, rng) for _ in range(3000)])
    np.testing.assert_array_equal(draws, np.swapaxes(draws, 1, 2))
    iu = np.triu_indices(6)  # on and above the diagonal: i.i.d. N(0, sigma^2)
    v = draws[:, iu[0], iu[1]].ravel()
    assert abs(v.var() / 4.0 - 1) < 5 * math.sqrt(2 / v.size)


def test_noise_scales_follow_lemmas_2_and_5():
    alpha, beta, T = 1.0, 0.1, 1024
    n = 11
    L = 1 + 1 + 2 * math.log(8 * T / beta)
    assert jdp_noise_std(alpha, beta, T) == pytest.approx(
        math.sqrt(16 * n * L * math.log(10 / beta) ** 2 / alpha**2)
    )
    # bounded (Bernoulli) rewards, as the paper's experiments
    assert jdp_noise_std(alpha, beta, T, reward_bound=1.0) == pytest.approx(
        math.sqrt(16 * n * 2 * math.log(10 / beta) ** 2)
    )
    # smaller alpha, more noise: sigma scales as 1/alpha
    assert jdp_noise_std(0.1, beta, T) == pytest.approx(10 * jdp_noise_std(1.0, beta, T))
    sx, su = local_jdp_noise_std(alpha, beta, m=64)
    assert sx**2 == pytest.approx(8 * math.log(5 / (2 * beta)))
    assert su**2 == pytest.approx(8 * (1 + 2 * math.log(8 * 64 / beta)) * math.log(5 / beta))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"alpha": 0.0, "beta": 0.1}, "alpha must be a finite float > 0"),
        ({"alpha": -1.0, "beta": 0.1}, "alpha must be a finite float > 0"),
        ({"alpha": 1.0, "beta": 0.0}, r"beta must be in the open interval \(0, 1\)"),
        ({"alpha": 1.0, "beta": 1.0}, r"beta must be in the open interval \(0, 1\)"),
    ],
)
def test_bad_alpha_and_beta_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        jdp_noise_std(T=10, **kwargs)
    with pytest.raises(ValueError, match=match):
        local_jdp_noise_std(m=4, **kwargs)


def test_the_psd_shift_of_lemma_3_keeps_every_prefix_positive_definite():
    # m = 32 features, T = 256 rounds, sigma from Lemma 2 at alpha = 1: with the shift 2 Lambda
    # every released Sigma_tilde_t (data PSD + noise + shift) has eigenvalues >= Lambda > 0 on
    # 5 seeds (Lemma 3: with probability 1 - zeta, zeta = 0.05).
    m, T = 32, 256
    sigma = jdp_noise_std(1.0, 0.1, T, reward_bound=1.0)
    shift = psd_shift(sigma, tree_depth(T), m, T)
    for seed in range(5):
        tree = TreeAggregation(m, T, sigma, seed=seed)
        for _ in range(T):
            tree.add(np.zeros((m, m)))
            H = tree.prefix_sum() + shift * np.eye(m)
            assert np.linalg.eigvalsh(H).min() >= shift / 2
