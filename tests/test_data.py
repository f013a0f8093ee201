"""dg.data: synthetic datasets (shapes, dtypes, determinism, the targets they promise) and the
two ways to batch variable-length sequences (by length, and padded with a mask)."""

from __future__ import annotations

import numpy as np
import pytest

from dyngraph import data
from dyngraph.data import Tree

# ---------------------------------------------------------------------------- points


@pytest.mark.parametrize("make", [
    lambda n, seed: data.spirals(n, classes=3, seed=seed),
    lambda n, seed: data.spirals(n, classes=4, noise=0.0, seed=seed),
    lambda n, seed: data.moons(n, seed=seed),
], ids=["spirals3", "spirals4", "moons"])
def test_point_datasets_have_the_promised_shapes_and_dtypes(make):
    X, y = make(101, 0)
    assert X.shape == (101, 2) and X.dtype == np.float32
    assert y.shape == (101,) and y.dtype == np.int64
    assert np.isfinite(X).all()
    counts = np.bincount(y)
    assert counts.max() - counts.min() <= 1  # balanced classes
    assert len(set(y[:20].tolist())) > 1  # shuffled, not sorted by class


@pytest.mark.parametrize("make", [data.spirals, data.moons], ids=["spirals", "moons"])
def test_point_datasets_are_deterministic_by_seed(make):
    X1, y1 = make(50, seed=3)
    X2, y2 = make(50, seed=3)
    X3, _ = make(50, seed=4)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert not np.allclose(X1, X3)


def test_spirals_without_noise_lie_on_their_arms():
    X, y = data.spirals(90, classes=3, noise=0.0, seed=0)
    r = np.hypot(X[:, 0], X[:, 1])
    angle = np.arctan2(X[:, 0], X[:, 1])  # the angle t of r * (sin t, cos t)
    expected = 2 * np.pi * y / 3 + 4 * r
    off_centre = r > 1e-6  # each arm starts at the origin, where the angle is undefined
    assert off_centre.sum() == 90 - 3
    difference = np.angle(np.exp(1j * (angle - expected)))  # wrapped to (-pi, pi]
    np.testing.assert_allclose(difference[off_centre], 0, atol=1e-5)
    assert r.max() <= 1.0 + 1e-6


def test_moons_without_noise_lie_on_two_half_circles():
    X, y = data.moons(40, noise=0.0, seed=0)
    outer, inner = X[y == 0], X[y == 1]
    np.testing.assert_allclose(np.hypot(*outer.T), 1.0, atol=1e-6)
    np.testing.assert_allclose(np.hypot(inner[:, 0] - 1, inner[:, 1] - 0.5), 1.0, atol=1e-6)


# ---------------------------------------------------------------------------- sequences


@pytest.mark.parametrize("task", [data.counting, data.parity], ids=["counting", "parity"])
def test_sequence_tasks_have_variable_lengths_and_correct_targets(task):
    examples = task(200, min_len=2, max_len=7, seed=0)
    assert len(examples) == 200
    lengths = {len(seq) for seq, _ in examples}
    assert lengths == set(range(2, 8))
    for seq, target in examples:
        assert seq.dtype == np.int64 and seq.ndim == 1
        assert set(seq.tolist()) <= {0, 1}
        ones = int(seq.sum())
        assert target == (ones if task is data.counting else ones % 2)
    again = task(200, min_len=2, max_len=7, seed=0)
    assert all(np.array_equal(a, b) and s == t for (a, s), (b, t) in zip(examples, again))
    other = task(200, min_len=2, max_len=7, seed=1)
    assert any(not np.array_equal(a, b) for (a, _), (b, _) in zip(examples, other))


def test_sequence_tasks_check_their_lengths():
    with pytest.raises(ValueError, match="min_len <= max_len"):
        data.parity(3, min_len=5, max_len=2)


# ---------------------------------------------------------------------------- trees


def test_random_trees_are_binary_bounded_and_labelled_by_leaf_parity():
    trees = data.random_trees(100, max_depth=4, vocab=7, seed=0)
    depths = set()
    for tree, label in trees:
        assert isinstance(tree, Tree)
        assert not tree.is_leaf  # the root of a tree with max_depth >= 1 is an inner node
        assert 1 <= tree.depth() <= 4
        depths.add(tree.depth())
        assert all(0 <= v < 7 for v in tree.leaves())
        assert label == sum(tree.leaves()) % 2
        stack = [tree]
        while stack:  # every inner node has two children, every leaf only a value
            node = stack.pop()
            if node.is_leaf:
                assert node.left is None and node.right is None
            else:
                assert node.value is None
                stack += [node.left, node.right]
    assert len(depths) > 1  # shapes vary: that is what makes the graph dynamic
    again = data.random_trees(100, max_depth=4, vocab=7, seed=0)
    assert [str(t) for t, _ in again] == [str(t) for t, _ in trees]
    assert [str(t) for t, _ in data.random_trees(100, 4, 7, seed=1)] != [str(t) for t, _ in trees]


def test_tree_text_and_validation():
    tree = Tree(left=Tree(3), right=Tree(left=Tree(1), right=Tree(4)))
    assert str(tree) == "(3 (1 4))"
    assert repr(tree) == "<Tree (3 (1 4))>"
    assert tree.leaves() == [3, 1, 4] and tree.depth() == 2
    with pytest.raises(ValueError, match="both left and right"):
        Tree(left=Tree(1))
    with pytest.raises(ValueError, match="not both"):
        Tree(5, left=Tree(1), right=Tree(2))
    assert data.random_trees(3, max_depth=0, seed=0)[0][0].is_leaf


# ---------------------------------------------------------------------------- batching


def _sequences():
    return [seq for seq, _ in data.parity(57, min_len=1, max_len=6, seed=2)]


def test_batch_by_length_groups_equal_lengths_and_covers_every_sequence_once():
    sequences = _sequences()
    batches = data.batch_by_length(sequences, batch_size=4)
    covered = np.concatenate([b.indices for b in batches])
    assert sorted(covered.tolist()) == list(range(len(sequences)))  # each exactly once
    for batch in batches:
        assert 1 <= len(batch.indices) <= 4
        assert batch.data.shape == (len(batch.indices), batch.length)
        for row, i in zip(batch.data, batch.indices):
            assert len(sequences[i]) == batch.length  # equal lengths: no padding
            np.testing.assert_array_equal(row, sequences[i])
    lengths = [b.length for b in batches]
    assert lengths == sorted(lengths)  # shortest first, deterministic
    for length in set(lengths):  # only the last batch of a length may be short
        sizes = [len(b.indices) for b in batches if b.length == length]
        assert all(size == 4 for size in sizes[:-1])
    again = data.batch_by_length(sequences, batch_size=4)
    assert all(np.array_equal(a.indices, b.indices) for a, b in zip(batches, again))


def test_batch_by_length_can_shuffle_the_batches_deterministically():
    sequences = _sequences()
    plain = data.batch_by_length(sequences, 4)
    shuffled = data.batch_by_length(sequences, 4, seed=0)
    key = [tuple(b.indices.tolist()) for b in plain]
    shuffled_key = [tuple(b.indices.tolist()) for b in shuffled]
    assert sorted(shuffled_key) == sorted(key) and shuffled_key != key
    assert shuffled_key == [tuple(b.indices.tolist())
                            for b in data.batch_by_length(sequences, 4, seed=0)]


def test_batch_by_length_keeps_feature_dimensions():
    sequences = [np.ones((3, 5)), np.zeros((2, 5)), np.full((3, 5), 2.0)]
    batches = data.batch_by_length(sequences, batch_size=8)
    assert [b.data.shape for b in batches] == [(1, 2, 5), (2, 3, 5)]
    assert batches[1].indices.tolist() == [0, 2]
    with pytest.raises(ValueError, match="batch_size"):
        data.batch_by_length(sequences, 0)


def test_pad_and_mask():
    padded, mask, lengths = data.pad_and_mask([[1, 2, 3], [4], [5, 6]])
    np.testing.assert_array_equal(padded, [[1, 2, 3], [4, 0, 0], [5, 6, 0]])
    np.testing.assert_array_equal(mask, [[1, 1, 1], [1, 0, 0], [1, 1, 0]])
    assert mask.dtype == bool and lengths.dtype == np.int64
    assert lengths.tolist() == [3, 1, 2]

    sequences = _sequences()
    result = data.pad_and_mask(sequences, pad_value=-1)
    assert result.data.shape == (len(sequences), max(len(s) for s in sequences))
    for row, row_mask, n, seq in zip(result.data, result.mask, result.lengths, sequences):
        assert n == len(seq) and row_mask.sum() == n
        np.testing.assert_array_equal(row[row_mask], seq)
        assert (row[~row_mask] == -1).all()

    features = data.pad_and_mask([np.ones((2, 3)), np.ones((1, 3))])
    assert features.data.shape == (2, 2, 3)
    with pytest.raises(ValueError, match="only the lengths may differ"):
        data.pad_and_mask([np.ones((2, 3)), np.ones((2, 4))])
    with pytest.raises(ValueError, match="at least one"):
        data.pad_and_mask([])
