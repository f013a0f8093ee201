"""Batches of sequences of different lengths (PyTorch's ``torch.nn.utils.rnn``).

A batch of sequences is padded to the longest one; the recurrent layers must then be told
which steps are real, or padding would leak into the final state. PyTorch's way, kept here::

    packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
    output, h_n = rnn(packed)                  # h_n: each sequence's state at its own last step
    output, lengths = pad_packed_sequence(output, batch_first=True)   # zeros on padded steps

NOTE [packing] A ``PackedSequence`` holds the real steps only, as PyTorch's does. The sequences
are sorted by length, longest first; ``data`` then lists, time step by time step, the steps of
the sequences still running at that step, and ``batch_sizes[t]`` says how many they are. Three
sequences of lengths 3, 2, 1 (steps a1 a2 a3, b1 b2, c1) pack as::

    data        = [a1, b1, c1,  a2, b2,  a3]
    batch_sizes = [3,           2,       1]

So at every step the sequences still running are the *first* ``batch_sizes[t]`` of the sorted
batch: a recurrent layer computes step t on those rows only. ``sorted_indices`` is the order
that sorted the batch (``None`` when it came sorted, ``enforce_sorted=True``) and
``unsorted_indices`` its inverse, which puts the results back in the caller's order.

Packing and padding are both one gather (an indexing op) of the other's rows, so gradients flow
between the padded batch and ``data`` exactly as in PyTorch: to the real steps only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ... import factories, functions
from ...tensor import Tensor


class _PackedSequenceFields(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(_PackedSequenceFields):
    """The real steps of a batch of sequences (see NOTE [packing]): the namedtuple
    ``(data, batch_sizes, sorted_indices, unsorted_indices)`` of PyTorch.

    ``data`` (N, *): the N real steps, time step by time step; ``batch_sizes`` (T,) int64: how
    many sequences run at each step; ``sorted_indices`` / ``unsorted_indices`` (B,) int64: the
    permutation that sorted the batch by length and its inverse (``None`` for a batch packed
    sorted). Made by ``pack_padded_sequence`` and ``pack_sequence``, not by hand.

    >>> packed = pack_sequence([dg.tensor([1., 2., 3.]), dg.tensor([4., 5.])])
    >>> packed.data.tolist(), packed.batch_sizes.tolist()
    ([1.0, 4.0, 2.0, 5.0, 3.0], [2, 2, 1])
    """

    __slots__ = ()

    def __new__(cls, data: Any, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if batch_sizes is None:  # PackedSequence((data, batch_sizes)), as PyTorch allows
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data.to(...)`` (dtype and/or device); the indices follow data's device and
        ``batch_sizes`` stays where it is. Returns ``self`` when ``data`` does not change."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, _on(self.sorted_indices, data.device),
                          _on(self.unsorted_indices, data.device))

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def cuda(self) -> PackedSequence:
        return self.to("cuda")

    def float(self) -> PackedSequence:
        return self.to(np.float32)

    def double(self) -> PackedSequence:
        return self.to(np.float64)

    def long(self) -> PackedSequence:
        return self.to(np.int64)

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` is on a GPU."""
        return self.data.device.type == "cuda"


def _on(indices: Tensor | None, device: Any) -> Tensor | None:
    return None if indices is None else indices.to(device)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation (``None`` for ``None``): ``inverse[permutation[i]] = i``."""
    if permutation is None:
        return None
    inverse = np.empty(permutation.shape, dtype=np.int64)
    inverse[permutation.numpy()] = np.arange(permutation.numel())
    return factories.tensor(inverse, device=permutation.device)


def _lengths_array(lengths: Any) -> np.ndarray:
    """``lengths`` (a list or a tensor) as PyTorch reads it: a 1-D int64 array."""
    array = np.asarray(lengths.numpy() if isinstance(lengths, Tensor) else lengths)
    if array.ndim != 1:
        raise RuntimeError(
            f"'lengths' argument should be a 1D CPU int64 tensor, but got {array.ndim}D "
            "lengths (pass one length per sequence)"
        )
    return array.astype(np.int64)


def _batch_sizes(sorted_lengths: np.ndarray) -> np.ndarray:
    """How many of the (decreasing) lengths exceed t, for each step t < the longest."""
    steps = np.arange(sorted_lengths[0] if sorted_lengths.size else 0)
    return (sorted_lengths[None, :] > steps[:, None]).sum(axis=1).astype(np.int64)


def _places(batch_sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row of packed data, its time step and its place in the sorted batch: step t
    holds the first ``batch_sizes[t]`` sequences (NOTE [packing])."""
    steps = np.repeat(np.arange(batch_sizes.size), batch_sizes)
    rows = np.concatenate([np.arange(n) for n in batch_sizes]) if batch_sizes.size else steps
    return steps, rows


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack the real steps of a padded batch: ``input`` is (T, B, *) (or (B, T, *) with
    ``batch_first``), ``lengths`` (B,) the real length of each sequence, each between 1 and T.
    With ``enforce_sorted`` (the default, as in PyTorch) the lengths must be in decreasing
    order; with ``enforce_sorted=False`` the batch is sorted here and ``sorted_indices`` says
    how. Differentiable: ``data``'s gradient goes back to the real steps of ``input``.

    >>> padded = dg.tensor([[1., 4.], [2., 5.], [3., 0.]])        # (T=3, B=2)
    >>> pack_padded_sequence(padded, [3, 2]).data.tolist()
    [1.0, 4.0, 2.0, 5.0, 3.0]
    """
    lengths = _lengths_array(lengths)
    batch_dim = 0 if batch_first else 1
    if lengths.size != input.shape[batch_dim]:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {lengths.size} "
            f"(batch_size={input.shape[batch_dim]})"
        )
    if enforce_sorted:
        if np.any(np.diff(lengths) > 0):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability."
            )
        sorted_indices = None
    else:
        # NOTE: a stable sort, so equal lengths keep their order, as torch.sort's on the CPU
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
        sorted_indices = factories.tensor(order, device=input.device)
        input = input.index_select(batch_dim, sorted_indices)
    if lengths.size and lengths.min() <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in "
            "'lengths' that is <= 0"
        )
    # NOTE: PyTorch does not check this one and reads past the end of its input.
    if lengths.size and lengths.max() > input.shape[1 - batch_dim]:
        raise RuntimeError(
            f"every length must be at most the padded length {input.shape[1 - batch_dim]}, "
            f"got {lengths.tolist()}"
        )
    if batch_first:
        input = input.transpose(0, 1)
    batch_sizes = factories.tensor(_batch_sizes(lengths))
    return PackedSequence(_packed_data(input, batch_sizes), batch_sizes, sorted_indices, None)


def _packed_data(padded: Tensor, batch_sizes: Tensor) -> Tensor:
    """The real steps of a padded (T, B, *) batch sorted by length, time step by time step
    (one gather: row t, b for each step t and each of its first ``batch_sizes[t]`` sequences)."""
    steps, rows = _places(batch_sizes.numpy())
    return padded[steps, rows]


def _padded_sorted(sequence: PackedSequence, total_length: int | None = None,
                   padding_value: float = 0.0) -> Tensor:
    """The packed steps back in a padded (T, B, *) tensor, batch in the sorted order:
    each place takes its row of ``data``, or a row of ``padding_value`` after the sequence's
    end (one gather from ``data`` and that extra row)."""
    batch_sizes = sequence.batch_sizes.numpy()
    steps, rows = _places(batch_sizes)
    length = batch_sizes.size if total_length is None else total_length
    batch = int(batch_sizes[0]) if batch_sizes.size else 0
    data = sequence.data
    padding = factories.full((1, *data.shape[1:]), padding_value, dtype=data.dtype,
                             device=data.device)
    source = np.full((length, batch), data.shape[0], dtype=np.int64)  # the padding row
    source[steps, rows] = np.arange(data.shape[0])
    return functions.cat([data, padding], 0)[source]


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None
                        ) -> tuple[Tensor, Tensor]:
    """Back to a padded batch: returns ``(padded, lengths)``, padded (T, B, *) (or (B, T, *)
    with ``batch_first``) with ``padding_value`` after each sequence's end, T the longest
    length (or ``total_length``), and lengths (B,) int64, both in the order the batch had
    before packing. Differentiable with respect to ``sequence.data``.

    >>> packed = pack_sequence([dg.tensor([1., 2., 3.]), dg.tensor([4., 5.])])
    >>> padded, lengths = pad_packed_sequence(packed, padding_value=-1.0)
    >>> padded.tolist(), lengths.tolist()
    ([[1.0, 4.0], [2.0, 5.0], [3.0, -1.0]], [3, 2])
    """
    longest = sequence.batch_sizes.shape[0]
    if total_length is not None and total_length < longest:
        raise ValueError(
            "Expected total_length to be at least the length of the longest sequence in "
            f"input, but got total_length={total_length} and max sequence length being "
            f"{longest}"
        )
    padded = _padded_sorted(sequence, total_length, padding_value)
    batch_sizes = sequence.batch_sizes.numpy()
    lengths = (batch_sizes[None, :] > np.arange(padded.shape[1])[:, None]).sum(axis=1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.numpy()]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, factories.tensor(lengths.astype(np.int64))


def pad_sequence(sequences: Sequence[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0) -> Tensor:
    """Stack sequences (L_i, *) of different lengths into (T, B, *) (or (B, T, *)), padding the
    shorter ones with ``padding_value``; differentiable with respect to each sequence."""
    longest = max(seq.shape[0] for seq in sequences)
    padded = []
    for seq in sequences:
        if seq.shape[0] < longest:
            fill = factories.full((longest - seq.shape[0], *seq.shape[1:]), padding_value,
                                  dtype=seq.dtype, device=seq.device)
            seq = functions.cat([seq, fill], 0)
        padded.append(seq)
    return functions.stack(padded, 1 if not batch_first else 0)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences (L_i, *): ``pad_sequence`` then ``pack_padded_sequence``. With
    ``enforce_sorted`` (the default) they must come longest first."""
    lengths = [seq.shape[0] for seq in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pack_sequence",
           "pad_packed_sequence", "pad_sequence"]
