"""Datasets and the loader that deals them in batches (PyTorch's ``torch.utils.data``).

- ``Dataset`` (``__getitem__`` and ``__len__``), ``TensorDataset`` (row i of each tensor),
  ``Subset``, ``ConcatDataset`` (``a + b``), ``IterableDataset``;
- samplers, which say in which order the indices come: ``SequentialSampler``,
  ``RandomSampler``, ``SubsetRandomSampler``, and ``BatchSampler`` (which groups them);
- ``DataLoader``: for each batch of indices, ``collate_fn([dataset[i] for i in batch])``;
- ``default_collate``: a list of samples -> one batch (tensors stacked, numbers made tensors,
  tuples, lists and dicts collated field by field), ``default_convert``;
- ``random_split``: a dataset cut into random non-overlapping parts.

NOTE [the DataLoader deals PyTorch's batches] The order is PyTorch's to the index: the samplers
draw from ``dg.randperm`` and ``dg.factories.random_seed``, which read the stream PyTorch's CPU
generator reads (NOTE [PyTorch's integer stream], factories.py), in PyTorch's order. Each
``iter(loader)`` first draws a base seed for worker processes from the loader's generator (as
PyTorch does, even with ``shuffle=False`` and no workers), then a ``RandomSampler`` without a
generator draws its own seed from the global stream and shuffles with a fresh generator seeded
with it. ``num_workers`` is accepted and ignored: batches are made in this process, in order,
which is what PyTorch's workers deliver too.

>>> ds = TensorDataset(dg.arange(10))
>>> [b[0].tolist() for b in DataLoader(ds, batch_size=4, shuffle=True,
...                                    generator=dg.Generator().manual_seed(1))]
[[4, 6, 9, 2], [3, 1, 0, 7], [8, 5]]
"""

from __future__ import annotations

import bisect
import collections.abc
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .. import factories
from ..factories import Generator, random_seed, randperm
from ..functions import stack
from ..tensor import Tensor

__all__ = [
    "BatchSampler", "ConcatDataset", "DataLoader", "Dataset", "IterableDataset",
    "RandomSampler", "Sampler", "SequentialSampler", "Subset", "SubsetRandomSampler",
    "TensorDataset", "default_collate", "default_convert", "random_split",
]

# ----------------------------------------------------------------------------- datasets


class Dataset:
    """A map-style dataset: ``dataset[i]`` is sample i, ``len(dataset)`` how many there are.
    Subclass it and write both (``__len__`` is what samplers need)."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(self, index)")

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset read as a stream (``__iter__``), for data that cannot be indexed."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__(self)")


class TensorDataset(Dataset):
    """Sample i is ``tuple(t[i] for t in tensors)``; the tensors share their first size.

    >>> ds = TensorDataset(dg.tensor([[1., 2.], [3., 4.]]), dg.tensor([0, 1]))
    >>> x, y = ds[1]; x.tolist(), y.item()
    ([3.0, 4.0], 1)
    """

    def __init__(self, *tensors: Tensor) -> None:
        sizes = {len(t) for t in tensors}
        if len(sizes) > 1:
            raise ValueError(f"TensorDataset: the tensors' first sizes differ ({sorted(sizes)}); "
                             "sample i is row i of each, so they must have as many rows")
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple[Any, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return len(self.tensors[0])


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Several datasets one after the other."""

    def __init__(self, datasets: Sequence[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        self.cumulative_sizes = list(np.cumsum([len(d) for d in self.datasets]))

    def __len__(self) -> int:
        return int(self.cumulative_sizes[-1])

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = 0 if which == 0 else int(self.cumulative_sizes[which - 1])
        return self.datasets[which][index - start]


def random_split(dataset: Dataset, lengths: Sequence[float],
                 generator: Generator | None = None) -> list[Subset]:
    """``dataset`` cut into ``len(lengths)`` random parts of those sizes (or fractions that
    sum to 1: what a fraction leaves over goes one sample each to the first parts), the
    same parts PyTorch cuts for the same seed.

    >>> train, valid = random_split(range(10), [0.8, 0.2], generator=dg.Generator().manual_seed(0))
    >>> list(valid)
    [8, 6]
    """
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != n:
        raise ValueError(f"random_split: the lengths {list(lengths)} sum to {sum(lengths)}, not "
                         f"to the dataset's length {n}")
    indices = randperm(n, generator=generator).tolist()
    parts, end = [], 0
    for length in lengths:
        parts.append(Subset(dataset, indices[end:end + length]))
        end += length
    return parts


# ----------------------------------------------------------------------------- samplers


class Sampler:
    """Says in which order a DataLoader visits the indices (``__iter__``)."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__(self)")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """The indices shuffled, PyTorch's permutation for the same seed (a whole permutation for
    every len(data_source) samples asked for). Without a ``generator`` it draws a seed from
    the global stream each time it is iterated, as PyTorch does. With ``replacement=True``
    the indices are drawn with ``dg.randint`` (numpy's numbers, not PyTorch's)."""

    def __init__(self, data_source: Any, replacement: bool = False,
                 num_samples: int | None = None, generator: Generator | None = None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            generator = Generator().manual_seed(random_seed())
        if self.replacement:
            yield from factories.randint(0, n, (self.num_samples,), generator=generator).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from randperm(n, generator=generator).tolist()
        yield from randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order (PyTorch's for the same seed)."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler):
    """The sampler's indices in lists of ``batch_size`` (the last one shorter, or dropped
    with ``drop_last=True``)."""

    def __init__(self, sampler: Any, batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


# ----------------------------------------------------------------------------- collation


def default_convert(data: Any) -> Any:
    """One sample as a DataLoader with ``batch_size=None`` gives it: numpy arrays become
    tensors, inside tuples, lists and dicts too (a tuple comes back a list, as in PyTorch);
    anything else stays as it is."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "OSUV":
        return factories.from_numpy(data)
    if isinstance(data, np.generic):
        return factories.tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return type(data)({k: default_convert(v) for k, v in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, list):
        return type(data)(default_convert(d) for d in data)
    return data


def default_collate(batch: Sequence[Any]) -> Any:
    """A list of samples -> one batch, as PyTorch's ``default_collate``: tensors (and numpy
    arrays) are stacked along a new first dimension; Python floats become a float64 tensor,
    ints an int64 tensor, bools a bool tensor; strings stay a list; a dict is collated key by
    key, a tuple or list field by field (a tuple gives a list, as in PyTorch).

    >>> x, y = default_collate([(dg.tensor([1., 2.]), 0), (dg.tensor([3., 4.]), 1)])
    >>> x.shape, y.tolist(), y.dtype
    ((2, 2), [0, 1], dtype('int64'))
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, np.ndarray) and elem.dtype.kind not in "OSUV":
        return default_collate([factories.from_numpy(np.asarray(b)) for b in batch])
    if isinstance(elem, np.generic):
        return factories.tensor(np.asarray(batch))
    if isinstance(elem, bool):
        return factories.tensor(list(batch))
    if isinstance(elem, float):
        return factories.tensor(list(batch), dtype=factories.float64)
    if isinstance(elem, int):
        return factories.tensor(list(batch), dtype=factories.int64)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return type(elem)({key: default_collate([d[key] for d in batch]) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(field) for field in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if len({len(sample) for sample in batch}) > 1:
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(list(field)) for field in zip(*batch)]
        return fields if isinstance(elem, tuple) else type(elem)(fields)
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(elem).__name__}")


# ----------------------------------------------------------------------------- the loader


class DataLoader:
    """Deals ``dataset`` in batches: ``for xb, yb in DataLoader(ds, batch_size=64,
    shuffle=True): ...``. PyTorch's arguments and order (NOTE [the DataLoader deals PyTorch's
    batches]); ``num_workers``, ``pin_memory`` and the worker options are accepted and change
    nothing here."""

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable[[list[Any]], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 generator: Generator | None = None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None
                                          or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
        self.dataset = dataset
        self.num_workers = num_workers
        self.generator = generator
        self.drop_last = drop_last
        self._iterable = isinstance(dataset, IterableDataset)
        if sampler is None and not self._iterable:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_sampler is not None:
            batch_size, drop_last = None, False
        elif batch_size is not None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None or (
                self._iterable and batch_size is not None) else default_convert
        self.collate_fn = collate_fn

    def __iter__(self) -> Iterator[Any]:
        random_seed(self.generator)  # the workers' base seed: drawn as PyTorch draws it
        return self._batches()

    def _batches(self) -> Iterator[Any]:
        if self._iterable:
            if self.batch_size is None:
                yield from (self.collate_fn(sample) for sample in self.dataset)
                return
            batch: list[Any] = []
            for sample in self.dataset:
                batch.append(sample)
                if len(batch) == self.batch_size:
                    yield self.collate_fn(batch)
                    batch = []
            if batch and not self.drop_last:
                yield self.collate_fn(batch)
            return
        if self.batch_sampler is None:
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self) -> int:
        if self._iterable:
            raise TypeError("a DataLoader over an IterableDataset has no len()")
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)
