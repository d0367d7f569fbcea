"""Tests for privtune.space: dimensions, short forms, and the encoding in the unit cube."""

import decimal
import math
import pickle
import warnings

import numpy as np
import optuna.distributions as od
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privtune.space import Categorical, Integer, Real, SearchSpace

# Derandomized so that CI sees the same examples on every run; few examples keep the file fast.
PROPERTIES = settings(max_examples=60, derandomize=True, deadline=None)

CHOICE_POOL = ["a", "b", "", 0, 1, 2, True, False, 1.0, 0.5, -2.5, None, (50,), (100, 50)]


def _decimal(x):
    return decimal.Decimal(repr(x))


@st.composite
def dimensions(draw):
    kind = draw(
        st.sampled_from(
            ["real", "log_real", "stepped_real", "integer", "log_integer", "categorical"]
        )
    )
    if kind == "real":
        low = draw(st.floats(-1e3, 1e3))
        return Real(low, low + draw(st.floats(1e-3, 1e3)))
    if kind == "log_real":
        low = draw(st.floats(1e-6, 1e3))
        return Real(low, low * draw(st.floats(1.01, 1e6)), log=True)
    if kind == "stepped_real":
        # Short decimals, so that the intended number of steps is the one the grid has.
        low = draw(st.integers(-1000, 1000)) / 100
        step = draw(st.integers(1, 500)) / 100
        n_steps = draw(st.integers(1, 50))
        off_grid = draw(st.sampled_from([decimal.Decimal(0), _decimal(step) / 2]))
        high = float(_decimal(low) + n_steps * _decimal(step) + off_grid)
        return Real(low, high, step=step)
    if kind == "integer":
        low = draw(st.integers(-1000, 1000))
        return Integer(low, low + draw(st.integers(0, 1000)), step=draw(st.integers(1, 7)))
    if kind == "log_integer":
        low = draw(st.integers(1, 1000))
        return Integer(low, low + draw(st.integers(0, 10**6)), log=True)
    choices = draw(
        st.lists(
            st.sampled_from(CHOICE_POOL), min_size=1, max_size=6, unique_by=lambda c: (type(c), c)
        )
    )
    return Categorical(choices)


@st.composite
def spaces(draw):
    dims = draw(st.lists(dimensions(), min_size=1, max_size=5))
    return SearchSpace({f"p{i}": dim for i, dim in enumerate(dims)})


def valid_values(dim):
    if isinstance(dim, Categorical):
        return st.sampled_from(dim.choices)
    if isinstance(dim, Integer):
        n_steps = (dim.high - dim.low) // dim.step
        return st.integers(0, n_steps).map(lambda k: dim.low + k * dim.step)
    if dim.step is not None:
        n_steps = int((_decimal(dim.high) - _decimal(dim.low)) // _decimal(dim.step))
        return st.integers(0, n_steps).map(lambda k: min(dim.low + k * dim.step, dim.high))
    return st.floats(dim.low, dim.high)


@st.composite
def spaces_with_params(draw):
    space = draw(spaces())
    return space, {name: draw(valid_values(dim)) for name, dim in space.items()}


@st.composite
def spaces_with_points(draw, max_rows=4):
    space = draw(spaces())
    rows = draw(st.integers(1, max_rows))
    coordinates = st.floats(0.0, 1.0)
    points = [
        draw(st.lists(coordinates, min_size=space.dim, max_size=space.dim)) for _ in range(rows)
    ]
    return space, np.array(points)


def assert_same_params(space, got, expected):
    assert list(got) == list(expected)
    for name, dim in space.items():
        a, b = got[name], expected[name]
        if isinstance(dim, Real) and dim.step is None:
            assert type(a) is float
            # A continuous real goes through an affine map (and log/exp on a log scale) both
            # ways, which can move it by a few units in the last place; rel_tol=1e-9 is far above
            # that and far below any difference that matters for a hyperparameter. abs_tol covers
            # values near zero in a range that straddles zero, where the error scales with the
            # range's width rather than with the value.
            assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12 * (dim.high - dim.low))
        else:
            # Integers, stepped reals and categories are exact: the type too (True is not 1).
            assert type(a) is type(b)
            assert a == b


def assert_valid(space, params):
    # to_unit validates every value (range, grid type, membership), so it must accept them.
    u = space.to_unit(params)
    assert u.shape == (space.dim,)
    assert np.all((u >= 0.0) & (u <= 1.0))


# --- properties --------------------------------------------------------------------------------


@PROPERTIES
@given(spaces_with_params())
def test_decode_inverts_encode_on_valid_params(space_and_params):
    space, params = space_and_params
    assert_same_params(space, space.from_unit(space.to_unit(params)), params)


@PROPERTIES
@given(spaces_with_params())
def test_encoding_lies_in_the_cube_and_categoricals_are_one_hot(space_and_params):
    space, params = space_and_params
    u = space.to_unit(params)
    assert u.shape == (space.dim,)
    assert np.all((u >= 0.0) & (u <= 1.0))
    for name, dim in space.items():
        if isinstance(dim, Categorical):
            block = u[space.slices[name]]
            assert sorted(block.tolist()) == [0.0] * (dim.width - 1) + [1.0]


@PROPERTIES
@given(spaces_with_points())
def test_decode_is_total_on_the_cube(space_and_points):
    space, U = space_and_points
    for params in space.from_unit_many(U):
        assert_valid(space, params)
        for name, dim in space.items():
            if isinstance(dim, Integer):
                assert type(params[name]) is int
            elif isinstance(dim, Real):
                assert type(params[name]) is float


@PROPERTIES
@given(spaces_with_points())
def test_snap_is_idempotent_and_keeps_the_decoded_params(space_and_points):
    space, U = space_and_points
    snapped = space.snap(U)
    assert snapped.shape == U.shape
    np.testing.assert_array_equal(space.snap(snapped), snapped)
    assert space.from_unit_many(snapped) == space.from_unit_many(U)
    # snap is to_unit(from_unit(u)) up to rounding in the continuous coordinates.
    np.testing.assert_allclose(snapped, space.to_unit_many(space.from_unit_many(U)), atol=1e-9)


@PROPERTIES
@given(spaces_with_points())
def test_vectorised_methods_agree_with_row_by_row(space_and_points):
    space, U = space_and_points
    decoded = space.from_unit_many(U)
    assert decoded == [space.from_unit(u) for u in U]
    np.testing.assert_array_equal(space.to_unit_many(decoded), [space.to_unit(p) for p in decoded])
    np.testing.assert_array_equal(space.snap(U), [space.snap(u) for u in U])


# --- dimensions --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"low": 1.0, "high": 1.0}, "`low` must be less than `high`"),
        ({"low": 2.0, "high": 1.0}, "`low` must be less than `high`"),
        ({"low": -math.inf, "high": 1.0}, "`low` must be finite"),
        ({"low": 0.0, "high": math.nan}, "`high` must be finite"),
        ({"low": 0.0, "high": 1.0, "log": True}, r"`log=True` requires `low > 0`"),
        ({"low": -1.0, "high": 1.0, "log": True}, r"`log=True` requires `low > 0`"),
        ({"low": 1.0, "high": 2.0, "log": True, "step": 0.1}, "cannot be combined with `log"),
        ({"low": 0.0, "high": 1.0, "step": 0.0}, "`step` must be positive"),
        ({"low": 0.0, "high": 1.0, "step": -0.1}, "`step` must be positive"),
        ({"low": -1e308, "high": 1e308}, r"the width `high - low` overflows a float"),
    ],
)
def test_real_rejects_invalid_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Real(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [{"low": True, "high": 2.0}, {"low": "0", "high": 1.0}, {"low": 0, "high": 1, "log": 1}],
)
def test_real_rejects_arguments_of_the_wrong_type(kwargs):
    with pytest.raises(TypeError, match="Real"):
        Real(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"low": 2, "high": 1}, "`low` must not exceed `high`"),
        ({"low": 0, "high": 10, "step": 0}, "`step` must be a positive int"),
        ({"low": 0, "high": 10, "step": -2}, "`step` must be a positive int"),
        ({"low": 0, "high": 10, "log": True}, r"`log=True` requires `low >= 1`"),
        ({"low": 1, "high": 10, "log": True, "step": 2}, r"`log=True` requires `step == 1`"),
        ({"low": 0, "high": 10**400}, r"`high` must lie within \+-2\*\*53"),
    ],
)
def test_integer_rejects_invalid_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Integer(**kwargs)


@pytest.mark.parametrize(
    "kwargs", [{"low": 0.5, "high": 2}, {"low": 0, "high": 2.0}, {"low": False, "high": 2}]
)
def test_integer_rejects_non_integer_bounds(kwargs):
    with pytest.raises(TypeError, match="must be an int"):
        Integer(**kwargs)


def test_integer_with_equal_bounds_is_a_constant():
    space = SearchSpace({"n": Integer(3, 3)})
    assert space.to_unit({"n": 3}).tolist() == [0.5]
    assert [p["n"] for p in space.from_unit_many([[0.0], [0.7], [1.0]])] == [3, 3, 3]


def test_integer_values_own_cells_of_equal_width():
    dim = Integer(1, 10)
    assert dim.encode([1, 10]).ravel().tolist() == pytest.approx([0.05, 0.95])
    u = (np.arange(10_000) + 0.5) / 10_000
    counts = np.bincount(dim.decode(u[:, None]))[1:]
    assert counts.tolist() == [1000] * 10


def test_stepped_integer_decodes_to_its_grid_and_stops_below_high():
    dim = Integer(1, 10, step=2)
    decoded = set(dim.decode(np.linspace(0.0, 1.0, 101)[:, None]))
    assert decoded == {1, 3, 5, 7, 9}
    assert dim.to_optuna() == od.IntDistribution(1, 9, step=2)


def test_log_integer_matches_optunas_normalisation():
    # Optuna's GP search space maps [low - 1/2, high + 1/2] in log space.
    dim = Integer(1, 100, log=True)
    k = np.array([1, 7, 100])
    expected = (np.log(k) - np.log(0.5)) / (np.log(100.5) - np.log(0.5))
    np.testing.assert_allclose(dim.encode(k.tolist()).ravel(), expected)


def test_stepped_real_decodes_to_its_grid_and_accepts_off_grid_values():
    dim = Real(0.0, 1.0, step=0.3)
    decoded = dim.decode(np.linspace(0.0, 1.0, 101)[:, None])
    assert sorted(set(decoded)) == pytest.approx([0.0, 0.3, 0.6, 0.9])
    assert max(decoded) <= 1.0
    assert dim.decode(dim.encode([1.0])) == pytest.approx([0.9])
    # low + 3 * step overshoots high by one rounding error; the grid stops at high.
    assert Real(0.0, 0.3, step=0.1).decode(np.array([[1.0]])) == [0.3]


def test_real_decodes_the_cube_faces_to_the_bounds_exactly():
    dim = Real(1e-6, 1e-2, log=True)
    assert dim.decode(np.array([[0.0], [1.0]])) == [1e-6, 1e-2]


@pytest.mark.parametrize(
    ("choices", "error", "match"),
    [
        ([], ValueError, "at least one"),
        (["a", "b", "a"], ValueError, "more than once"),
        ([1, 2, 1], ValueError, "more than once"),
        ("abc", TypeError, "list or tuple"),
        (3, TypeError, "list or tuple"),
        ([[1], [2]], TypeError, "hashable"),
    ],
)
def test_categorical_rejects_invalid_choices(choices, error, match):
    with pytest.raises(error, match=match):
        Categorical(choices)


def test_categorical_tells_apart_choices_that_compare_equal():
    space = SearchSpace({"c": [1, True, 1.0, 0, False, None]})
    for choice in space["c"].choices:
        decoded = space.from_unit(space.to_unit({"c": choice}))["c"]
        assert type(decoded) is type(choice)
        assert decoded == choice
    assert Categorical([1, 2]) != Categorical([True, 2])
    with pytest.raises(ValueError, match="matched by type"):
        SearchSpace({"c": [1, 2]}).to_unit({"c": 1.0})


def test_categorical_handles_nan_and_numpy_choices():
    dim = Categorical([np.str_("a"), np.int64(3), math.nan])
    assert dim.choices[:2] == ("a", 3)
    assert type(dim.choices[1]) is int
    assert dim.index_of(math.nan) == 2
    assert dim.index_of(np.int64(3)) == 1


def test_categorical_decodes_ties_to_the_lowest_index():
    dim = Categorical(["a", "b", "c"])
    assert dim.decode(np.array([[0.2, 0.7, 0.7], [0.0, 0.0, 0.0]])) == ["b", "a"]


# --- SearchSpace construction ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (["rbf", "linear"], Categorical(["rbf", "linear"])),
        ((1, 10), Integer(1, 10)),
        ((np.int64(1), 10), Integer(1, 10)),
        ((1, 10.0), Real(1.0, 10.0)),
        ((0.0, 1.0), Real(0.0, 1.0)),
        ((0.0, 1.0, "uniform"), Real(0.0, 1.0)),
        ((1e-4, 1e-1, "log-uniform"), Real(1e-4, 1e-1, log=True)),
        ((1, 1000, "log-uniform"), Integer(1, 1000, log=True)),
        (Real(0.0, 2.0, step=0.5), Real(0.0, 2.0, step=0.5)),
    ],
)
def test_short_forms(spec, expected):
    assert SearchSpace({"p": spec})["p"] == expected


@pytest.mark.parametrize(
    ("distribution", "expected"),
    [
        (od.FloatDistribution(0.0, 1.0), Real(0.0, 1.0)),
        (od.FloatDistribution(1e-5, 1.0, log=True), Real(1e-5, 1.0, log=True)),
        (od.FloatDistribution(0.0, 1.0, step=0.25), Real(0.0, 1.0, step=0.25)),
        (od.IntDistribution(1, 10), Integer(1, 10)),
        (od.IntDistribution(1, 1000, log=True), Integer(1, 1000, log=True)),
        (od.IntDistribution(0, 10, step=5), Integer(0, 10, step=5)),
        (od.CategoricalDistribution(["a", None, 2]), Categorical(["a", None, 2])),
    ],
)
def test_optuna_distributions_are_accepted_and_round_trip(distribution, expected):
    dim = SearchSpace({"p": distribution})["p"]
    assert dim == expected
    assert dim.to_optuna() == distribution


def test_to_optuna_moves_an_off_grid_high_to_the_last_grid_point_without_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Real(0.0, 1.0, step=0.3).to_optuna() == od.FloatDistribution(0.0, 0.9, step=0.3)


def test_space_to_optuna_round_trips():
    space = SearchSpace({"lr": (1e-4, 1.0, "log-uniform"), "depth": (1, 8), "crit": ["a", "b"]})
    assert SearchSpace(space.to_optuna()) == space


@pytest.mark.parametrize(
    ("spec", "error", "match"),
    [
        (("a", "b"), TypeError, "two numbers"),
        ((True, 3), TypeError, "two numbers"),
        ((1, 2, "log"), ValueError, "log-uniform"),
        ((1, 2, 3, 4), TypeError, "a list of choices"),
        ("abc", TypeError, "a list of choices"),
        ({"low": 0}, TypeError, "a list of choices"),
        (5, TypeError, "a list of choices"),
        ((0.0, 1.0, "log-uniform"), ValueError, "low > 0"),
        ((5, 1), ValueError, "must not exceed"),
        ([], ValueError, "at least one"),
    ],
)
def test_invalid_specifications_name_the_parameter(spec, error, match):
    with pytest.raises(error, match=match) as info:
        SearchSpace({"my_param": spec})
    assert "'my_param'" in str(info.value)


@pytest.mark.parametrize(
    ("mapping", "error", "match"),
    [
        ({}, ValueError, "at least one parameter"),
        ({"": (0, 1)}, ValueError, "non-empty"),
        ({1: (0, 1)}, TypeError, "must be strings"),
        ([("a", (0, 1))], TypeError, "mapping"),
    ],
)
def test_invalid_mappings_are_rejected(mapping, error, match):
    with pytest.raises(error, match=match):
        SearchSpace(mapping)


def test_mapping_interface_and_layout():
    space = SearchSpace({"b": (0.0, 1.0), "a": ["x", "y", "z"], "c": (1, 5)})
    assert space.names == ("b", "a", "c")
    assert list(space) == ["b", "a", "c"]
    assert len(space) == 3
    assert space.dim == 5
    assert dict(space.slices) == {"b": slice(0, 1), "a": slice(1, 4), "c": slice(4, 5)}
    assert space["a"] == Categorical(["x", "y", "z"])
    assert dict(space.items())["c"] == Integer(1, 5)
    assert SearchSpace(space) == space
    assert space == {"b": Real(0.0, 1.0), "a": Categorical(["x", "y", "z"]), "c": Integer(1, 5)}
    # Same parameters in another order make another cube layout, hence another space.
    assert SearchSpace({name: space[name] for name in reversed(space.names)}) != space
    assert pickle.loads(pickle.dumps(space)) == space
    with pytest.raises(KeyError):
        space["nope"]


# --- encoding and decoding errors --------------------------------------------------------------

SPACE = SearchSpace({"x": (0.0, 1.0), "n": (1, 10), "k": ["a", "b"]})
VALID = {"x": 0.5, "n": 3, "k": "a"}


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"n": 3, "k": "a"}, r"missing value for parameter\(s\) \['x'\]"),
        ({**VALID, "extra": 1}, r"unknown parameter\(s\) \['extra'\]"),
        ({**VALID, "x": 1.5}, r"'x': value 1.5 is outside \[0.0, 1.0\]"),
        ({**VALID, "x": math.nan}, "'x': value is NaN"),
        ({**VALID, "x": "0.5"}, "'x': expected a real number"),
        ({**VALID, "n": 11}, r"'n': value 11 is outside \[1, 10\]"),
        ({**VALID, "n": 2.5}, "'n': expected an integer"),
        ({**VALID, "n": True}, "'n': expected an integer"),
        ({**VALID, "k": "c"}, "'k': value 'c' is not among the choices"),
    ],
)
def test_to_unit_rejects_invalid_params(params, match):
    with pytest.raises(ValueError, match=match):
        SPACE.to_unit(params)


def test_to_unit_many_names_the_row_of_a_bad_mapping():
    with pytest.raises(ValueError, match=r"row 1"):
        SPACE.to_unit_many([VALID, {"x": 0.5}])
    with pytest.raises(TypeError, match="mapping"):
        SPACE.to_unit([0.5, 3, "a"])


def test_to_unit_accepts_numpy_scalars():
    params = {"x": np.float32(0.5), "n": np.int64(3), "k": np.str_("a")}
    np.testing.assert_allclose(SPACE.to_unit(params), SPACE.to_unit(VALID))
    assert SPACE.to_unit({**VALID, "n": 3.0}).tolist() == SPACE.to_unit(VALID).tolist()


def test_to_unit_many_of_no_rows_has_shape_zero_by_dim():
    assert SPACE.to_unit_many([]).shape == (0, SPACE.dim)


@pytest.mark.parametrize(
    ("u", "match"),
    [
        ([0.5, math.nan, 1.0, 0.0], "NaN"),
        ([0.5, 1.5, 1.0, 0.0], "outside the unit cube"),
        ([-0.01, 0.5, 1.0, 0.0], "outside the unit cube"),
        ([0.5, math.inf, 1.0, 0.0], "outside the unit cube"),
        ([0.5, 0.5, 1.0], r"shape \(4,\)"),
        ([[0.5, 0.5, 1.0, 0.0]], r"shape \(4,\)"),
    ],
)
def test_from_unit_rejects_invalid_points(u, match):
    with pytest.raises(ValueError, match=match):
        SPACE.from_unit(u)


def test_points_off_the_cube_by_rounding_error_are_clipped():
    assert SPACE.from_unit([1 + 1e-12, -1e-12, 0.0, 1.0]) == SPACE.from_unit([1.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(SPACE.snap([1 + 1e-12, -1e-12, 0.0, 1.0]), [1.0, 0.05, 0, 1])


def test_snap_rejects_wrong_shapes_and_nan():
    with pytest.raises(ValueError, match="shape"):
        SPACE.snap(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="shape"):
        SPACE.snap(np.zeros((1, 1, 4)))
    with pytest.raises(ValueError, match="NaN"):
        SPACE.snap([[0.5, math.nan, 1.0, 0.0]])


# --- sampling ----------------------------------------------------------------------------------


def test_sample_is_reproducible_with_a_seed():
    space = SearchSpace({"x": (1e-4, 1.0, "log-uniform"), "n": (1, 10), "k": ["a", "b", "c"]})
    assert space.sample(20, 7) == space.sample(20, 7)
    assert space.sample(20, np.random.default_rng(7)) == space.sample(20, 7)
    assert space.sample(20, 7) != space.sample(20, 8)
    assert space.sample(0, 7) == []
    for params in space.sample(20):
        assert_valid(space, params)


def test_sample_is_uniform_in_the_cube():
    space = SearchSpace({"x": (1e-4, 1.0, "log-uniform"), "k": ["a", "b", "c", "d"]})
    samples = space.sample(4000, 0)
    x = np.array([p["x"] for p in samples])
    # Log-uniform on [1e-4, 1]: half the mass below 1e-2.
    assert abs(np.mean(x < 1e-2) - 0.5) < 0.04
    counts = np.unique([p["k"] for p in samples], return_counts=True)[1]
    assert np.all(np.abs(counts / 4000 - 0.25) < 0.03)


def test_sample_rejects_a_negative_count():
    with pytest.raises(ValueError, match="non-negative"):
        SPACE.sample(-1, 0)


def test_frozen_scipy_distributions_become_the_dimension_over_their_support():
    from scipy import stats

    space = SearchSpace(
        {
            "C": stats.loguniform(1e-3, 1e2),
            "scaled": stats.reciprocal(1, 10, scale=2),  # still log-uniform, on [2, 20]
            "shifted": stats.loguniform(1, 10, loc=1),  # not log-uniform on [2, 11]: linear
            "tol": stats.uniform(1, 2),  # loc, scale: [1, 3]
            "depth": stats.randint(1, 10),  # high exclusive, as in scipy and numpy
            "alpha": stats.beta(2, 3),
            "n": stats.binom(5, 0.3),
        }
    )
    assert dict(space) == {
        "C": Real(1e-3, 1e2, log=True),
        "scaled": Real(2.0, 20.0, log=True),
        "shifted": Real(2.0, 11.0),
        "tol": Real(1.0, 3.0),
        "depth": Integer(1, 9),
        "alpha": Real(0.0, 1.0),
        "n": Integer(0, 5),
    }


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda s: s.norm(), r"parameter 'x': scipy.stats.norm has the unbounded support"),
        (lambda s: s.poisson(3), r"scipy.stats.poisson has the unbounded support"),
        (lambda s: s.uniform(0, 0), r"scipy.stats.uniform .* is not a valid distribution"),
    ],
)
def test_scipy_distributions_without_a_finite_support_are_refused(make, match):
    from scipy import stats

    with pytest.raises(ValueError, match=match):
        SearchSpace({"x": make(stats)})


UNION = [
    {"kernel": ["linear"], "C": (0.1, 10.0)},
    {"kernel": ["rbf", "sigmoid"], "C": Integer(1, 4), "gamma": (1e-3, 1.0, "log-uniform")},
]


def test_a_union_decodes_to_one_space_and_snaps_each_configuration_to_one_point():
    from privtune.space import SpaceUnion

    union = SpaceUnion(UNION)
    assert union.names == ("kernel", "C", "gamma")
    assert union.dim == 2 + 2 + 2 + 1 + 1 and union.layout[-1].stop == union.dim
    U = np.random.default_rng(0).random((400, union.dim))
    decoded = union.from_unit_many(U)
    S = union.snap(U)
    assert np.array_equal(union.snap(S), S)  # a fixed point
    assert union.from_unit_many(S) == decoded  # the same configurations
    assert all(set(p) in ({"kernel", "C"}, {"kernel", "C", "gamma"}) for p in decoded)
    # a uniform point chooses each space with probability 1/2 (400 draws: SE 0.025; 4 SE)
    assert abs(np.mean(["gamma" in p for p in decoded]) - 0.5) < 0.1
    # equal configurations are one point, whatever the unused coordinates held
    rows = {S[i].tobytes() for i, p in enumerate(decoded) if p["kernel"] == "rbf" and p["C"] == 2}
    assert len(rows) == len({str(p) for p in decoded if p["kernel"] == "rbf" and p["C"] == 2})
    for p in decoded[:20]:
        assert union.from_unit(union.to_unit(p)) == pytest.approx(p)


def test_a_union_counts_and_covers_its_configurations():
    from privtune.space import SpaceUnion

    union = SpaceUnion([{"kernel": ["linear"]}, {"kernel": ["rbf"], "shrinking": [True, False]}])
    assert union.n_configurations == 3
    configs = [{"kernel": "linear"}, {"kernel": "rbf", "shrinking": True}]
    assert not union.covered_by(union.to_unit_many(configs))
    configs.append({"kernel": "rbf", "shrinking": False})
    assert union.covered_by(union.to_unit_many(configs))
    assert SpaceUnion(UNION).n_configurations is None


def test_a_union_encodes_in_the_first_space_that_holds_a_configuration():
    from privtune.space import SpaceUnion

    union = SpaceUnion(UNION)
    # extra parameters are allowed (an estimator's own values name them all)
    u = union.to_unit({"kernel": "rbf", "C": 3, "gamma": 0.5, "degree": 3})
    assert union.from_unit(u) == pytest.approx({"kernel": "rbf", "C": 3, "gamma": 0.5})
    with pytest.raises(ValueError, match="no space of the list holds"):
        union.to_unit({"kernel": "poly", "C": 1.0})
    with pytest.raises(ValueError, match="at least two spaces"):
        SpaceUnion(UNION[:1])
