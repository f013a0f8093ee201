"""The one helper for dimension arguments (dyngraph/ops/dims.py): PyTorch's wording."""

import numpy as np
import pytest

from dyngraph.ops.dims import normalize_dim, normalize_dims, one_spelling


def test_normalize_dim_wraps_negative_dims():
    assert normalize_dim(-1, 2) == 1
    assert normalize_dim(np.int64(0), 3) == 0
    assert normalize_dim(-1, 0) == 0  # a 0-d tensor accepts -1 and 0


@pytest.mark.parametrize("dim, ndim, expected", [(3, 2, "[-2, 1], but got 3"),
                                                 (-3, 2, "[-2, 1], but got -3"),
                                                 (1, 0, "[-1, 0], but got 1")])
def test_out_of_range_is_pytorchs_index_error(dim, ndim, expected):
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of "
                       + expected.replace("[", r"\[").replace("]", r"\]")):
        normalize_dim(dim, ndim)


def test_a_float_dim_is_a_type_error_naming_the_argument():
    with pytest.raises(TypeError, match=r"sum\(\): argument 'dim' must be an int.*float 1.5"):
        normalize_dim(1.5, 2, fn="sum")


def test_normalize_dims():
    assert normalize_dims(None, 3) is None
    assert normalize_dims(-1, 3) == 2
    assert normalize_dims([0, -1], 3) == (0, 2)
    assert normalize_dims(0, 0) == ()
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times"):
        normalize_dims((0, -2), 2)


def test_one_spelling():
    assert one_spelling("sum", "dim", None, "axis", None, default=5) == 5
    assert one_spelling("sum", "dim", 1, "axis", None) == 1
    assert one_spelling("sum", "dim", None, "axis", 0) == 0
    with pytest.raises(TypeError, match=r"sum\(\) got both dim= and axis="):
        one_spelling("sum", "dim", 1, "axis", 1)
