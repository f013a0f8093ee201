"""Batches of sequences of different lengths (PyTorch's ``torch.nn.utils.rnn``).

A batch of sequences is padded to the longest one; the recurrent layers must then be told
which steps are real, or padding would leak into the final state. PyTorch's way, kept here::

    packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
    output, h_n = rnn(packed)                  # h_n: each sequence's state at its own last step
    output, lengths = pad_packed_sequence(output, batch_first=True)   # zeros on padded steps

NOTE [packing] PyTorch's ``PackedSequence`` really packs: ``.data`` holds only the real steps,
sorted by length, with ``batch_sizes`` saying how many sequences are still running at each step.
dyngraph's keeps the padded tensor (time first) and the lengths, and the recurrent layers
*mask* instead: on a padded step the state is carried over unchanged and the output is zero,
as lesson 06 does by hand. The results (``output`` after ``pad_packed_sequence``, ``h_n``)
are PyTorch's; only the inside of the PackedSequence differs, so code that reads
``packed.data`` or ``packed.batch_sizes`` does not transfer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ... import factories, functions
from ...tensor import Tensor


class PackedSequence(NamedTuple):
    """A padded batch, time first (T, B, *), and the length of each sequence (B,)."""

    data: Tensor
    lengths: Tensor

    def mask(self) -> Tensor:
        """(T, B, 1), 1.0 on real steps and 0.0 on padding, in the data's dtype."""
        steps = np.arange(self.data.shape[0])[:, None]
        real = steps < self.lengths.numpy()[None, :]
        return factories.tensor(real[:, :, None], dtype=self.data.dtype, device=self.data.device)


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Mark the real steps of a padded batch: ``input`` is (T, B, *) (or (B, T, *) with
    ``batch_first``), ``lengths`` (B,) the real length of each sequence. With
    ``enforce_sorted`` (the default, as in PyTorch) the lengths must be in decreasing order.
    """
    lengths = np.asarray(lengths.numpy() if isinstance(lengths, Tensor) else lengths,
                         dtype=np.int64).reshape(-1)
    if enforce_sorted and np.any(np.diff(lengths) > 0):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
            "pack_sequence to sidestep this requirement if you do not need ONNX exportability."
        )
    if batch_first:
        input = input.transpose(0, 1)
    if lengths.shape[0] != input.shape[1]:
        raise ValueError(
            f"got {lengths.shape[0]} lengths for a batch of {input.shape[1]} sequences"
        )
    if lengths.size and (lengths.min() <= 0 or lengths.max() > input.shape[0]):
        raise RuntimeError(
            f"every length must be between 1 and the padded length {input.shape[0]}, got "
            f"{lengths.tolist()}"
        )
    longest = int(lengths.max()) if lengths.size else 0
    return PackedSequence(input[:longest], factories.tensor(lengths))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None
                        ) -> tuple[Tensor, Tensor]:
    """Back to a padded tensor: returns ``(padded, lengths)``, padded (T, B, *) or (B, T, *)."""
    # NOTE [padded back as PyTorch pads] PyTorch's packed data holds the real steps only, so
    # what comes back has max(lengths) steps and padding_value after each sequence's end,
    # whatever the padded input held there (and no gradient flows to those places).
    longest = int(sequence.lengths.numpy().max()) if sequence.lengths.numel() else 0
    data = functions.where(sequence.mask() > 0, sequence.data, padding_value)[:longest]
    if total_length is not None and total_length > data.shape[0]:
        extra = factories.full((total_length - data.shape[0], *data.shape[1:]), padding_value,
                               dtype=data.dtype, device=data.device)
        data = functions.cat([data, extra], 0)
    if batch_first:
        data = data.transpose(0, 1)
    return data, sequence.lengths


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


__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence"]
