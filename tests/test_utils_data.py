"""dg.utils.data against torch.utils.data: the same batches, in the same order, for the same
seed (NOTE [the DataLoader deals PyTorch's batches]), collated the same way."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import dyngraph as dg
from dyngraph.utils import data as dgdata

torch = pytest.importorskip("torch")
from torch.utils import data as tdata  # noqa: E402


def plain(batch):
    """A batch as plain Python, with each tensor's dtype name, to compare across libraries."""
    if isinstance(batch, (dg.Tensor, torch.Tensor)):
        return ("tensor", str(batch.dtype).replace("torch.", ""), batch.tolist())
    if isinstance(batch, dict):
        return {k: plain(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__, [plain(b) for b in batch])
    return batch


def both(make):
    """``make(lib, data)`` run with dyngraph and with torch."""
    return plain(make(dg, dgdata)), plain(make(torch, tdata))


@pytest.mark.parametrize("n", [0, 1, 2, 9, 100])
@pytest.mark.parametrize("seed", [0, 1, 2147483647, 2**40 + 3])
def test_randperm_is_pytorchs_for_a_seeded_generator(n, seed):
    mine = dg.randperm(n, generator=dg.Generator().manual_seed(seed))
    theirs = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    assert mine.tolist() == theirs.tolist() and mine.dtype == np.int64


def test_randperm_refuses_a_negative_size():
    with pytest.raises(ValueError, match="non-negative int"):
        dg.randperm(-1)


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("batch_size,drop_last", [(4, False), (4, True), (1, False), (10, False)])
def test_dataloader_over_a_tensor_dataset_deals_pytorchs_batches(shuffle, batch_size, drop_last):
    def make(lib, data):
        ds = data.TensorDataset(lib.arange(10) * 10, lib.arange(10).float())
        g = lib.Generator().manual_seed(5)
        loader = data.DataLoader(ds, batch_size=batch_size, shuffle=shuffle,
                                 drop_last=drop_last, generator=g)
        return [len(loader), list(loader), list(loader)]  # two epochs: different orders
    assert both(make)[0] == both(make)[1]


def test_global_seed_shuffles_as_pytorch_when_nothing_else_draws():
    """manual_seed, then two epochs from the global stream (each draws a base seed and a
    sampler seed): PyTorch's order, as long as no float was drawn since the seed."""
    def make(lib, data):
        lib.manual_seed(0)
        loader = data.DataLoader(data.TensorDataset(lib.arange(7)), batch_size=3, shuffle=True)
        return [list(loader), list(loader), lib.randperm(5)]
    mine, theirs = both(make)
    assert mine == theirs


def test_random_split_cuts_pytorchs_parts():
    def make(lib, data):
        parts = data.random_split(range(10), [0.7, 0.3], generator=lib.Generator().manual_seed(0))
        exact = data.random_split(list("abcdefg"), [3, 4], generator=lib.Generator().manual_seed(1))
        odd = data.random_split(range(11), [0.5, 0.25, 0.25],
                                generator=lib.Generator().manual_seed(2))
        return [[list(p) for p in parts], [list(p) for p in exact], [len(p) for p in odd],
                [list(p) for p in odd]]
    mine, theirs = both(make)
    assert mine == theirs


def test_random_split_says_when_lengths_do_not_add_up():
    with pytest.raises(ValueError, match="sum to 5, not to the dataset's length 10"):
        dgdata.random_split(range(10), [2, 3])


Point = namedtuple("Point", "x y")


@pytest.mark.parametrize("samples", [
    "tensors", "tuples", "dicts", "floats", "ints", "bools", "strings", "numpy", "namedtuples",
    "lists",
])
def test_default_collate_as_pytorch(samples):
    def make(lib, data):
        batch = {
            "tensors": [lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])],
            "tuples": [(lib.tensor([1.0]), 0), (lib.tensor([2.0]), 1)],
            "dicts": [{"x": lib.tensor([1, 2]), "y": 0.5}, {"x": lib.tensor([3, 4]), "y": 1.5}],
            "floats": [0.5, 1.5, 2.5],
            "ints": [1, 2, 3],
            "bools": [True, False],
            "strings": ["a", "b"],
            "numpy": [np.array([1.0, 2.0], dtype=np.float32),
                      np.array([3.0, 4.0], dtype=np.float32)],
            "namedtuples": [Point(1, 2.0), Point(3, 4.0)],
            "lists": [[1, 2.0], [3, 4.0]],
        }[samples]
        return data.default_collate(batch)
    mine, theirs = both(make)
    assert mine == theirs


def test_a_dataset_of_ones_own_with_a_sampler_and_a_collate_fn():
    class Squares:
        def __init__(self, lib):
            self.lib = lib

        def __len__(self):
            return 6

        def __getitem__(self, i):
            return self.lib.tensor([float(i)]), i * i

    def make(lib, data):
        ds = Squares(lib)
        by_subset = data.DataLoader(ds, batch_size=2, sampler=data.SubsetRandomSampler(
            [0, 2, 4, 5], generator=lib.Generator().manual_seed(3)))
        batches = data.BatchSampler(data.SequentialSampler(range(5)), 2, drop_last=False)
        by_batches = data.DataLoader(ds, batch_sampler=batches, collate_fn=lambda b: b)
        unbatched = data.DataLoader(ds, batch_size=None)
        subset = data.Subset(ds, [5, 1])
        joined = data.ConcatDataset([subset, subset])
        return [list(by_subset), list(by_batches), list(unbatched)[:2], len(by_batches),
                [joined[i] for i in range(-4, 4)], len(joined)]
    mine, theirs = both(make)
    assert mine == theirs


def test_sampler_and_shuffle_together_are_refused_as_in_pytorch():
    ds = dgdata.TensorDataset(dg.arange(3))
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        dgdata.DataLoader(ds, sampler=dgdata.SequentialSampler(ds), shuffle=True)


def test_tensor_dataset_refuses_tensors_of_different_lengths():
    with pytest.raises(ValueError, match="first sizes differ"):
        dgdata.TensorDataset(dg.zeros(3), dg.zeros(4))


def test_iterable_dataset_batches_as_it_streams():
    def make(lib, data):
        class Stream(data.IterableDataset):
            def __iter__(self):
                return iter(lib.arange(5).float())
        return list(data.DataLoader(Stream(), batch_size=2))
    mine, theirs = both(make)
    assert mine == theirs


def test_the_minibatch_loop_learners_write():
    """The tutorials' loop: a model trained over two shuffled epochs from the same weights,
    the same batches, the same losses."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3)).astype(np.float32)
    Y = rng.standard_normal((20, 1)).astype(np.float32)
    W = rng.standard_normal((1, 3)).astype(np.float32)

    def run(lib, data):
        model = lib.nn.Linear(3, 1)
        with lib.no_grad():
            model.weight.copy_(lib.tensor(W))
            model.bias.zero_()
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        loader = data.DataLoader(data.TensorDataset(lib.tensor(X), lib.tensor(Y)), batch_size=6,
                                 shuffle=True, generator=lib.Generator().manual_seed(42))
        losses = []
        for _ in range(2):
            for xb, yb in loader:
                loss = lib.nn.functional.mse_loss(model(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
        return np.array(losses)
    np.testing.assert_allclose(run(dg, dgdata), run(torch, tdata), rtol=1e-5)
