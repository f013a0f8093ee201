"""One version counter per array memory (NOTE [version counters] in dyngraph/tensor.py): every
alias of a tensor's data shares its counter, so an in-place change through any alias is caught
at backward; numpy, which cannot bump a counter, never gets a writable alias of a graph's
memory."""

import numpy as np
import pytest

import dyngraph as dg

MODIFIED = "modified by an inplace operation"


def _saved_square():
    h = dg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (h * h).sum()  # Mul saves h
    return h, y


def test_detach_shares_the_counter_so_backward_refuses_a_changed_saved_value():
    h, y = _saved_square()
    d = h.detach()
    d += 1  # changes the memory h * h saved
    assert d.version == h.version == 1
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()  # before: silently [4, 6, 8] instead of [2, 4, 6]


def test_the_same_program_raises_in_pytorch():
    torch = pytest.importorskip("torch", reason="compares with PyTorch's behaviour")
    h = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (h * h).sum()
    d = h.detach()
    d += 1
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_an_unchanged_alias_leaves_backward_alone():
    h, y = _saved_square()
    d = h.detach()
    assert d.tolist() == [1.0, 2.0, 3.0]
    y.backward()
    assert h.grad.tolist() == [2.0, 4.0, 6.0]


def test_data_is_a_detached_alias_sharing_the_counter():
    h, y = _saved_square()
    data = h.data
    assert isinstance(data, dg.Tensor) and not data.requires_grad and data.is_leaf
    assert data.array is h.array
    data.mul_(10)
    assert h.tolist() == [10.0, 20.0, 30.0] and h.version == 1
    # NOTE: PyTorch gives .data a fresh counter (its way around this check); dyngraph shares it.
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


VIEWS = {
    "reshape": lambda t: t.reshape(2, 2),
    "view": lambda t: t.view(4),
    "transpose": lambda t: t.reshape(2, 2).transpose(0, 1),
    "permute": lambda t: t.reshape(2, 2).permute(1, 0),
    "T": lambda t: t.reshape(2, 2).T,
    "unsqueeze": lambda t: t.unsqueeze(0),
    "squeeze": lambda t: t.reshape(1, 4).squeeze(0),
    "flatten": lambda t: t.reshape(2, 2).flatten(),
    "slice": lambda t: t[1:3],
    "int index": lambda t: t.reshape(2, 2)[0],
    "detach of a view": lambda t: t[:2].detach(),
}


@pytest.mark.parametrize("make_view", VIEWS.values(), ids=VIEWS.keys())
def test_an_inplace_change_through_a_view_is_caught(make_view):
    h = dg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = (h * h).sum()
    with dg.no_grad():
        v = make_view(h)
        assert v.array.base is not None  # a view: the same memory
        v += 1
    assert h.version == 1
    with pytest.raises(RuntimeError, match=MODIFIED):
        y.backward()


def test_expand_is_an_alias_too():
    x = dg.tensor([1.0, 2.0])
    assert x.expand(3, 2)._counter is x._counter is not None


def test_a_copy_from_advanced_indexing_has_its_own_counter():
    h, y = _saved_square()
    with dg.no_grad():
        picked = h[[0, 2]]  # numpy copies: not an alias
        picked += 100
    assert h.version == 0
    y.backward()
    assert h.grad.tolist() == [2.0, 4.0, 6.0]


def test_a_changed_saved_output_is_caught_through_an_alias():
    x = dg.tensor([0.0, 1.0], requires_grad=True)
    y = x.exp()  # Exp saves its output
    z = y.sum()
    with dg.no_grad():
        y.detach().add_(1)
    with pytest.raises(RuntimeError, match="its output saved by Exp"):
        z.backward()


def test_a_recorded_inplace_op_keeps_counting_on_the_same_counter():
    x = dg.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    d = h.detach()
    h += 1  # recorded out of place; h keeps its counter
    assert h.version == d.version == 1
    h.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]


# ---------------------------------------------------------------------------- numpy


def test_numpy_refuses_a_tensor_that_requires_grad_and_names_detach():
    x = dg.tensor([4.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad\. "
                       r"Use tensor\.detach\(\)\.numpy\(\) instead\."):
        x.numpy()


def test_pytorch_refuses_it_with_the_same_words():
    torch = pytest.importorskip("torch", reason="compares with PyTorch's message")
    with pytest.raises(RuntimeError, match=r"Use tensor\.detach\(\)\.numpy\(\) instead"):
        torch.tensor([4.0], requires_grad=True).numpy()


def test_numpy_of_a_graphs_memory_is_read_only():
    x = dg.tensor([4.0], requires_grad=True)
    z = x.log().sum()
    for array in (x.detach().numpy(), x.data.numpy(), np.asarray(x)):
        assert not array.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 1.0
    z.backward()
    assert x.grad.tolist() == [0.25]  # not 1.0: the saved x was not overwritten


def test_numpy_of_plain_data_shares_writable_memory_as_in_pytorch():
    t = dg.tensor([1.0, 2.0])
    a = t.numpy()
    assert a.flags.writeable and a is t.array
    a[0] = 5.0  # numpy writes are not counted (documented in NOTE [version counters])
    assert t.tolist() == [5.0, 2.0] and t.version == 0


def test_from_numpy_shares_memory():
    a = np.array([1.0, 2.0], dtype=np.float32)
    t = dg.from_numpy(a)
    a[1] = 7.0
    assert t.tolist() == [1.0, 7.0] and t.dtype == np.float32


# ---------------------------------------------------------------------------- .data


def test_data_updates_like_pytorch():
    p = dg.tensor([1.0, 2.0], requires_grad=True)
    (p * p).sum().backward()  # grad = [2, 4]
    p.data += -0.1 * p.grad
    np.testing.assert_allclose(p.detach().numpy(), [0.8, 1.6], rtol=1e-6)
    p.data.add_(p.grad, alpha=-0.1)
    np.testing.assert_allclose(p.detach().numpy(), [0.6, 1.2], rtol=1e-6)
    p.data.sub_(p.grad, alpha=0.1).mul_(2)
    np.testing.assert_allclose(p.detach().numpy(), [0.8, 1.6], rtol=1e-6)
    p.data.zero_()
    assert p.tolist() == [0.0, 0.0] and p.requires_grad and p.is_leaf
    p.data.fill_(3)
    assert p.tolist() == [3.0, 3.0]


def test_assigning_data_stores_the_array():
    p = dg.tensor([1.0, 2.0], requires_grad=True)
    p.data = dg.tensor([5.0, 6.0, 7.0])  # another shape is fine, as in PyTorch
    assert type(p.array) is np.ndarray and p.tolist() == [5.0, 6.0, 7.0] and p.requires_grad
    p.data = np.zeros(2, dtype=np.float64)
    assert type(p.array) is np.ndarray and p.dtype == np.float64
    with pytest.raises(RuntimeError, match="must be floating point"):
        p.data = dg.tensor([1, 2])
    with pytest.raises(TypeError, match="Variable data has to be a tensor"):
        p.data = [1.0, 2.0]


def test_copy_is_an_inplace_op():
    x = dg.zeros(2, 3)
    x.copy_(dg.tensor([1, 2, 3]))  # broadcast, cast to float32
    assert x.tolist() == [[1.0, 2.0, 3.0]] * 2 and x.dtype == np.float32 and x.version == 1
    w = dg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        w.copy_(dg.zeros(2))
    with dg.no_grad():
        w.copy_(dg.zeros(2))
    assert w.tolist() == [0.0, 0.0] and w.version == 1
    src = dg.tensor([1.0, 2.0], requires_grad=True)
    h = dg.zeros(2)
    h.copy_(src * 3)
    h.sum().backward()
    assert src.grad.tolist() == [3.0, 3.0]
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        dg.zeros(2).copy_(dg.zeros(3))
