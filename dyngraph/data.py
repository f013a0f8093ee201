"""Small synthetic datasets, made in code (nothing to download), and batching helpers.

Everything here is plain numpy and deterministic: each function takes a ``seed`` and draws from
its own ``numpy.random.Generator``, so the same call gives the same data on every machine.

- Points in the plane for a classifier: ``spirals`` (several interleaved arms) and ``moons``.
- Variable-length sequences for a recurrent net: ``counting`` (how many 1s?) and ``parity``
  (is the number of 1s odd?). Each example is ``(sequence, target)``; lengths differ, so the
  graph of an RNN differs from one example to the next.
- Random binary ``Tree``s for a recursive net: its graph has the shape of each tree.
- ``batch_by_length``: dynamic batching without padding, grouping sequences of equal length;
  ``pad_and_mask``: the static alternative, padding to the longest with a mask.

>>> X, y = dg.data.spirals(300, classes=3, seed=0)
>>> X.shape, X.dtype, y.shape, y.dtype
((300, 2), dtype('float32'), (300,), dtype('int64'))
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

# ---------------------------------------------------------------------------- points


def spirals(n: int, classes: int = 3, noise: float = 0.2,
            seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points on ``classes`` interleaved spiral arms (the CS231n toy problem).

    Arm k has the points r * (sin t, cos t) with the radius r going from 0 to 1 and the angle
    t = 2 pi k / classes + 4 r + noise * N(0, 1); no straight line separates the arms. The
    points are shuffled; the arms differ in size by at most one point.

    Returns ``X`` (n, 2) float32 and the arm of each point ``y`` (n,) int64.

    >>> X, y = dg.data.spirals(6, classes=3, seed=1)
    >>> sorted(y.tolist())
    [0, 0, 1, 1, 2, 2]
    """
    _check_count(n)
    if classes < 1:
        raise ValueError(f"classes must be at least 1, got {classes}")
    rng = np.random.default_rng(seed)
    points, labels = [], []
    for k in range(classes):
        m = n // classes + (1 if k < n % classes else 0)
        r = np.linspace(0.0, 1.0, m)
        t = 2 * math.pi * k / classes + 4.0 * r + noise * rng.standard_normal(m)
        points.append(np.stack([r * np.sin(t), r * np.cos(t)], axis=1))
        labels.append(np.full(m, k, dtype=np.int64))
    return _shuffled(rng, np.concatenate(points), np.concatenate(labels))


def moons(n: int, noise: float = 0.1, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points on two interleaving half circles (scikit-learn's ``make_moons``).

    Class 0: (cos s, sin s); class 1: (1 - cos s, 0.5 - sin s), for s in [0, pi], plus
    Gaussian noise of standard deviation ``noise`` on both coordinates; shuffled.

    Returns ``X`` (n, 2) float32 and ``y`` (n,) int64.

    >>> X, y = dg.data.moons(100, seed=0)
    >>> int(y.sum())
    50
    """
    _check_count(n)
    rng = np.random.default_rng(seed)
    n_outer = n // 2
    n_inner = n - n_outer
    s_outer = np.linspace(0.0, math.pi, n_outer)
    s_inner = np.linspace(0.0, math.pi, n_inner)
    outer = np.stack([np.cos(s_outer), np.sin(s_outer)], axis=1)
    inner = np.stack([1.0 - np.cos(s_inner), 0.5 - np.sin(s_inner)], axis=1)
    X = np.concatenate([outer, inner]) + noise * rng.standard_normal((n, 2))
    y = np.concatenate([np.zeros(n_outer, dtype=np.int64), np.ones(n_inner, dtype=np.int64)])
    return _shuffled(rng, X, y)


def _shuffled(rng: np.random.Generator, X: np.ndarray,
              y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = rng.permutation(len(y))
    return X[order].astype(np.float32), y[order]


def _check_count(n: int) -> None:
    if n < 0:
        raise ValueError(f"the number of examples must be >= 0, got {n}")


# ---------------------------------------------------------------------------- sequences


def counting(n: int, min_len: int = 1, max_len: int = 10,
             seed: int = 0) -> list[tuple[np.ndarray, int]]:
    """``n`` random bit sequences of lengths ``min_len`` to ``max_len``; the target of each is
    the number of 1s in it (a class in 0 ... max_len).

    Returns a list of ``(sequence, target)``: ``sequence`` an int64 array of shape (length,).

    >>> seq, target = dg.data.counting(1, min_len=5, max_len=5, seed=0)[0]
    >>> int(seq.sum()) == target
    True
    """
    return [(bits, int(bits.sum())) for bits in _bit_sequences(n, min_len, max_len, seed)]


def parity(n: int, min_len: int = 1, max_len: int = 10,
           seed: int = 0) -> list[tuple[np.ndarray, int]]:
    """``n`` random bit sequences of lengths ``min_len`` to ``max_len``; the target of each is
    1 when it holds an odd number of 1s, else 0 (a task that needs every step remembered).

    Returns a list of ``(sequence, target)``: ``sequence`` an int64 array of shape (length,).

    >>> [(seq.tolist(), target) for seq, target in dg.data.parity(2, 3, 3, seed=0)]
    [([1, 1, 1], 1), ([0, 0, 0], 0)]
    """
    return [(bits, int(bits.sum()) % 2) for bits in _bit_sequences(n, min_len, max_len, seed)]


def _bit_sequences(n: int, min_len: int, max_len: int, seed: int) -> Iterator[np.ndarray]:
    _check_count(n)
    if not 0 <= min_len <= max_len:
        raise ValueError(f"need 0 <= min_len <= max_len, got min_len={min_len}, "
                         f"max_len={max_len}")
    rng = np.random.default_rng(seed)
    for length in rng.integers(min_len, max_len + 1, size=n):
        yield rng.integers(0, 2, size=int(length), dtype=np.int64)


# ---------------------------------------------------------------------------- trees


@dataclass(frozen=True, repr=False)
class Tree:
    """A binary tree: a leaf holds an integer ``value``; an inner node holds ``left`` and
    ``right`` subtrees (and no value).

    >>> tree = Tree(left=Tree(3), right=Tree(left=Tree(1), right=Tree(4)))
    >>> str(tree), tree.leaves(), tree.depth()
    ('(3 (1 4))', [3, 1, 4], 2)
    """

    value: int | None = None
    left: Tree | None = None
    right: Tree | None = None

    def __post_init__(self) -> None:
        leaf = self.value is not None
        if leaf and (self.left is not None or self.right is not None):
            raise ValueError("a Tree is a leaf (a value) or an inner node (left and right), "
                             "not both")
        if not leaf and (self.left is None or self.right is None):
            raise ValueError("an inner Tree node needs both left and right subtrees")

    @property
    def is_leaf(self) -> bool:
        return self.value is not None

    def leaves(self) -> list[int]:
        """The leaf values, left to right."""
        values, stack = [], [self]
        while stack:
            node = stack.pop()
            if node.is_leaf:
                values.append(node.value)
            else:
                stack.extend((node.right, node.left))  # left on top: visited first
        return values

    def depth(self) -> int:
        """Edges on the longest path from here to a leaf (0 for a leaf)."""
        deepest, stack = 0, [(self, 0)]
        while stack:
            node, depth = stack.pop()
            deepest = max(deepest, depth)
            if not node.is_leaf:
                stack.extend(((node.left, depth + 1), (node.right, depth + 1)))
        return deepest

    def __str__(self) -> str:
        """The tree in brackets: "(3 (1 4))" (recursive: these trees are small)."""
        if self.is_leaf:
            return str(self.value)
        return f"({self.left} {self.right})"

    def __repr__(self) -> str:
        return f"<Tree {self}>"


def random_trees(n: int, max_depth: int = 3, vocab: int = 10,
                 seed: int = 0) -> list[tuple[Tree, int]]:
    """``n`` random binary trees with leaf values in 0 ... vocab - 1, each labelled with the
    parity of the sum of its leaves (1 when odd): a label that depends on every leaf.

    A node at depth d becomes a leaf with probability d / max_depth (so the root, for
    max_depth >= 1, is always an inner node) and always at depth max_depth.

    Returns a list of ``(tree, label)``.

    >>> tree, label = dg.data.random_trees(1, max_depth=2, seed=0)[0]
    >>> label == sum(tree.leaves()) % 2
    True
    """
    _check_count(n)
    if not 0 <= max_depth <= 20:
        raise ValueError(f"max_depth must be between 0 and 20 (small trees), got {max_depth}")
    if vocab < 1:
        raise ValueError(f"vocab must be at least 1, got {vocab}")
    rng = np.random.default_rng(seed)

    def grow(depth: int) -> Tree:
        if depth == max_depth or rng.random() < depth / max_depth:
            return Tree(value=int(rng.integers(vocab)))
        left = grow(depth + 1)
        return Tree(left=left, right=grow(depth + 1))

    trees = []
    for _ in range(n):
        tree = grow(0)
        trees.append((tree, sum(tree.leaves()) % 2))
    return trees


# ---------------------------------------------------------------------------- batching


class LengthBatch(NamedTuple):
    """Sequences of one length, stacked: ``data`` (batch, length, ...) and their positions
    ``indices`` in the list given to ``batch_by_length`` (to pick the matching targets)."""

    indices: np.ndarray
    data: np.ndarray

    @property
    def length(self) -> int:
        return self.data.shape[1]


def batch_by_length(sequences: Sequence[Any], batch_size: int,
                    seed: int | None = None) -> list[LengthBatch]:
    """Dynamic batching without padding: group sequences of EQUAL length into batches.

    A define-by-run RNN builds a graph per batch, so each batch can have its own length and
    nothing is wasted on padding. Batches come shortest length first; within one length, in
    the order of ``sequences``, ``batch_size`` at a time (the last batch of a length may be
    smaller). With a ``seed``, the order of the batches is shuffled, deterministically.
    Every sequence lands in exactly one batch.

    >>> data = dg.data.parity(100, seed=0)
    >>> targets = np.array([t for _, t in data])
    >>> for batch in dg.data.batch_by_length([s for s, _ in data], batch_size=16):
    ...     x, y = batch.data, targets[batch.indices]        # x: (B, L), y: (B,)
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    arrays = [np.asarray(s) for s in sequences]
    by_length: dict[int, list[int]] = {}
    for i, array in enumerate(arrays):
        if array.ndim == 0:
            raise ValueError(f"sequence {i} is a single number, not a sequence")
        by_length.setdefault(len(array), []).append(i)
    batches = []
    for length in sorted(by_length):
        positions = by_length[length]
        for start in range(0, len(positions), batch_size):
            chunk = positions[start : start + batch_size]
            batches.append(LengthBatch(np.array(chunk, dtype=np.int64),
                                       np.stack([arrays[i] for i in chunk])))
    if seed is not None:
        order = np.random.default_rng(seed).permutation(len(batches))
        batches = [batches[i] for i in order]
    return batches


class Padded(NamedTuple):
    """Sequences padded to the longest: ``data`` (n, max_len, ...), ``mask`` (n, max_len)
    True at real steps, and ``lengths`` (n,)."""

    data: np.ndarray
    mask: np.ndarray
    lengths: np.ndarray


def pad_and_mask(sequences: Sequence[Any], pad_value: Any = 0) -> Padded:
    """The static alternative to ``batch_by_length``: pad every sequence to the longest one.

    ``mask[i, t]`` is True when step t of sequence i is real and False on padding; a model
    must use it to keep padding from changing its results (and computes on it anyway).

    >>> data, mask, lengths = dg.data.pad_and_mask([[1, 2, 3], [4]])
    >>> data.tolist(), mask.tolist(), lengths.tolist()
    ([[1, 2, 3], [4, 0, 0]], [[True, True, True], [True, False, False]], [3, 1])
    """
    arrays = [np.asarray(s) for s in sequences]
    if not arrays:
        raise ValueError("pad_and_mask needs at least one sequence")
    for i, array in enumerate(arrays):
        if array.ndim == 0:
            raise ValueError(f"sequence {i} is a single number, not a sequence")
        if array.shape[1:] != arrays[0].shape[1:]:
            raise ValueError(
                f"sequence {i} has steps of shape {array.shape[1:]}, but sequence 0 has "
                f"{arrays[0].shape[1:]}: only the lengths may differ"
            )
    lengths = np.array([len(a) for a in arrays], dtype=np.int64)
    longest = int(lengths.max())
    dtype = np.result_type(*arrays)
    data = np.full((len(arrays), longest, *arrays[0].shape[1:]), pad_value, dtype=dtype)
    mask = np.zeros((len(arrays), longest), dtype=bool)
    for i, array in enumerate(arrays):
        data[i, : len(array)] = array
        mask[i, : len(array)] = True
    return Padded(data, mask, lengths)
