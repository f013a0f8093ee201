"""One fact per op, at the op (issue 39): each op states, beside its forward and backward, what a
step of it makes (``Op.meta``: shape, dtype, elements, work) and which kind of value each option
is (``Op.option_types``); the static-graph loader asks the ops and keeps no table of its own.

Here: every op a static graph can name states both; each op's statement agrees with what its
forward makes over the op table's inputs (in float32, float64 and, where the op takes them,
integers); and static_io.py names no op."""

from __future__ import annotations

import ast
import contextlib
import inspect
from pathlib import Path

import numpy as np
import pytest
from op_table import ALL_CASES, INTEGER_OUTPUT_CASES, dg_inputs, ids

import dyngraph as dg
from dyngraph import meta, ops, static_io
from dyngraph.function import Function

STATIC_IO = Path(static_io.__file__)
REGISTRY = [getattr(ops, name) for name in ops.__all__]  # the ops a static graph can name


class Statements(dg.FunctionHook):
    """For each op run: what its meta stated from its inputs, beside what forward made."""

    def __init__(self) -> None:
        self.seen: list[tuple[type, tuple, dict, meta.Meta, dg.Tensor]] = []

    def forward_postprocess(self, cls, args, options, output):
        if cls.__module__.startswith("dyngraph.ops."):
            stated = cls.meta([meta.shape_of(a) for a in args], [meta.dtype_of(a) for a in args],
                              **options)
            self.seen.append((cls, args, options, stated, output))


def _agree(statements: Statements, where: str) -> set[str]:
    """Check every statement against what forward made; the names of the ops seen."""
    for cls, args, options, stated, output in statements.seen:
        what = (f"{where}: {cls.__name__} on {[meta.shape_of(a) for a in args]} "
                f"{[meta.dtype_of(a) for a in args]} with {options}")
        assert stated.shape is None or stated.shape == output.shape, what
        assert stated.dtype is None or stated.dtype == output.dtype, f"{what}: {stated.dtype}"
        assert stated.elements >= output.numel(), what
        assert stated.work >= stated.elements or stated.work >= output.numel(), what
    return {cls.__name__ for cls, *_ in statements.seen}


CASES = ALL_CASES + INTEGER_OUTPUT_CASES
# what an op may raise when given integers or booleans it does not take
REFUSALS = (TypeError, ValueError, RuntimeError, IndexError, NotImplementedError, OverflowError,
            FloatingPointError, ZeroDivisionError)


@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_each_ops_meta_agrees_with_what_its_forward_makes(case, dtype):
    inputs = dg_inputs(case, case.arrays(), dtype=dtype)
    with Statements() as statements, dg.no_grad():
        case.dg(*inputs)
    _agree(statements, case.id)


@pytest.mark.parametrize("case", ALL_CASES, ids=ids(ALL_CASES))
@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.bool_])
def test_each_ops_meta_agrees_on_integer_inputs_where_the_op_takes_them(case, dtype):
    """Integers and booleans meet numpy's promotion and PyTorch's (NOTE [type promotion]): the
    op's stated dtype must be what apply makes. Ops refusing such inputs are not judged."""
    inputs = [dg.tensor(np.asarray(a).astype(dtype)) if spec.differentiable else
              dg.tensor(np.asarray(a)) for spec, a in zip(case.inputs, case.arrays())]
    with Statements() as statements, np.errstate(all="ignore"), \
            contextlib.suppress(*REFUSALS):  # (what ran before a refusal is still judged)
        case.dg(*inputs)
    _agree(statements, case.id)


def _written_into(x, w):
    y = x.clone()
    y[1:] = w * 2  # through a view: CopySlices
    return y


# Ops the op table reaches only through other ops, or not at all: one program each
MORE = {
    "cast": lambda x: x.to(dg.float64) + x.int(),
    "clone": lambda x: x.clone(),
    "log10-log2": lambda x: x.abs().log10() + (x.abs() + 1).log2(),
    "copy-slices": lambda x: _written_into(x, x[:2].exp()),
    "set-item": lambda x: ops.SetItem.apply(x, 0.5, key=(slice(0, 2), 1)),
    "index-add": lambda x: ops.IndexAdd.apply(x, shape=(5, 3), key=(np.array([0, 4, 4]),)),
    "floor-divide": lambda x: x // 2.0 + 1.5 // x,
    "remainder-of-number": lambda x: 2.5 % x + 3 % x,
}


@pytest.mark.parametrize("name", list(MORE))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_meta_agrees_on_the_ops_the_table_reaches_through_others(name, dtype):
    x = dg.tensor(np.arange(1, 10).reshape(3, 3).astype(dtype), requires_grad=dtype != np.int32)
    with Statements() as statements, np.errstate(all="ignore"):
        MORE[name](x)
    assert _agree(statements, name)


def test_the_agreement_covers_every_op_a_static_graph_can_name():
    """Every op of the registry is judged above (a new op needs a case)."""
    seen: set[str] = set()
    for case in CASES:
        with Statements() as statements, dg.no_grad():
            case.dg(*dg_inputs(case, case.arrays()))
        seen |= _agree(statements, case.id)
    for name, program in MORE.items():
        with Statements() as statements:
            program(dg.tensor(np.arange(1.0, 10.0).reshape(3, 3), requires_grad=True))
        seen |= _agree(statements, name)
    missing = sorted(set(ops.__all__) - seen - {"ToDevice"})  # (one device on a CPU machine)
    assert missing == []


def test_every_op_a_static_graph_can_name_states_its_option_types():
    """Each option an op's forward takes by keyword, and each it is traced with, has a stated
    kind, and no op states a kind for a name its forward does not take."""
    for cls in REGISTRY:
        parameters = list(inspect.signature(cls.forward).parameters)[1:]
        assert set(cls.option_types) <= set(parameters), cls.__name__
        for name, kind in cls.option_types.items():
            assert isinstance(kind, meta.OptionType), (cls.__name__, name)
        keyword_only = [p.name for p in inspect.signature(cls.forward).parameters.values()
                        if p.kind is inspect.Parameter.KEYWORD_ONLY]
        assert set(keyword_only) <= set(cls.option_types), cls.__name__


def test_ops_with_options_state_them_in_their_own_class():
    """The kinds live with the op (NOTE [option types]): an op with options that are not
    inputs or an index states them itself."""
    for cls in REGISTRY:
        if "option_types" in cls.__dict__:
            continue
        parameters = list(inspect.signature(cls.forward).parameters)[1:]
        assert not {"axis", "dim", "dims", "keepdims", "keepdim", "shape", "sizes", "dtype",
                    "equation", "reduction"} & set(parameters), cls.__name__


def test_meta_states_a_dtype_and_counts_for_every_op():
    x = np.dtype(np.float32)
    assert Function.meta([(2, 3), (3,)], [x, 2.0]) == meta.Meta(6, None, x, 6)
    assert ops.Exp.meta([(4,)], [np.dtype(np.int64)]).dtype == np.float32  # (the default float)
    assert ops.Sum.meta([(4,)], [np.dtype(np.int32)]).dtype == np.int64
    assert ops.Cast.meta([(4,)], [x], dtype=np.dtype(np.int8)).dtype == np.int8
    product = ops.MatMul.meta([(5, 3), (3, 7)], [x, x])
    assert product.shape == (5, 7) and product.work == 5 * 7 * 3
    assert ops.Einsum.meta([(3000, 3000), (3000, 3000)], [x, x], equation="ab,cd->").work \
        == 3000**4


def test_static_io_names_no_op():
    """static_io.py keeps no per-op table: no string, name or attribute in its code is an op's
    name (its comments and docstrings may tell of ops, as prose)."""
    tree = ast.parse(STATIC_IO.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    names = set(ops.__all__)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            found += [word for word in names if f"{word}" == node.value.strip()
                      or f'"{word}"' in node.value or f"'{word}'" in node.value]
        elif isinstance(node, ast.Name) and node.id in names:
            found.append(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in names:
            found.append(node.attr)
    assert found == []
    for table in ("OPTION_TYPES", "step_allocation", "step_work", "_EXACT_SHAPE_OPS"):
        assert not hasattr(static_io, table), table
