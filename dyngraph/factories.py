"""Making tensors: dg.tensor, zeros, ones, full, randn, rand, arange, linspace, eye, *_like.

Like PyTorch: Python floats become float32 (the default dtype), Python ints int64; a numpy
array keeps its dtype. ``manual_seed`` makes randn / rand / dropout repeatable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import backend
from .ops.dims import normalize_size, normalize_sizes
from .tensor import DEFAULT_FLOAT, Tensor, legacy_data, resolve_dtype

float16 = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
uint8 = np.dtype(np.uint8)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
bool_ = np.dtype(np.bool_)

# NOTE [PyTorch's integer stream] dyngraph's floats (randn, rand, dropout) are numpy's, not the
# ones PyTorch draws. Shuffling is different: a learner compares the batches a DataLoader
# deals with PyTorch's, and random_split's halves, so randperm and the seeds a sampler draws
# come from the stream PyTorch's CPU generator uses, a 32-bit Mersenne Twister seeded with
# the seed's low 32 bits (numpy's legacy RandomState seeding is the same), read raw:
# randperm is PyTorch's Fisher-Yates (swap r[i] with r[i + random() % (n - i)]) and a seed is
# random64() = (first << 32 | second) % 2**63. A seeded Generator therefore shuffles as
# PyTorch's does; the global one does too as long as nothing has drawn floats from PyTorch's
# since torch.manual_seed (torch.randn draws from the same stream there, numpy's here).
def _integer_stream(seed: int | None) -> np.random.MT19937:
    stream = np.random.MT19937()
    if seed is not None:
        _, key, pos, *_ = np.random.RandomState(seed & 0xFFFFFFFF).get_state()
        stream.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": pos}}
    return stream


def manual_seed(seed: int) -> Generator:
    """Seed dyngraph's random numbers (randn, rand, dropout; randperm and the DataLoader's
    shuffling: NOTE [PyTorch's integer stream]); returns the default generator, as PyTorch's
    ``g = torch.manual_seed(0)`` does."""
    return default_generator.manual_seed(seed)


def generator() -> np.random.Generator:
    """The numpy generator behind the default generator (what randn and dropout draw from)."""
    return default_generator.rng


def tensor(
    data: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    name: str | None = None,
) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (a number, nested lists, an array).

    >>> x = dg.tensor([[1., 2.]], requires_grad=True, name="x")
    """
    if isinstance(data, Tensor):
        data = data.array
    source = backend.device_of(data)
    if source == backend.CPU and not isinstance(data, np.ndarray):  # Python numbers and lists
        given = data
        try:
            data = np.asarray(data)
        except ValueError as exc:
            raise ValueError(f"could not make a tensor from this data: {exc}") from None
        if dtype is None and data.dtype == np.float64 and not _holds_numpy_float64(given):
            dtype = DEFAULT_FLOAT  # Python floats -> the default float32
    if data.dtype == object and any(_too_big_int(v) for v in data.flat):
        too_big = next(v for v in data.flat if _too_big_int(v))
        raise OverflowError(f"could not make a tensor: the integer {_short(too_big)} is too big "
                            "to convert (int64 holds -2**63 up to 2**63 - 1)")
    if data.dtype.kind not in "biufc":  # objects, strings, dates: not numbers
        raise TypeError(
            f"could not make a tensor from data of dtype {data.dtype}: use numbers, or (nested) "
            "lists or arrays of numbers"
        )
    device = source if device is None else backend.normalize_device(device)
    xp = backend.module_for(device)
    dtype = None if dtype is None else resolve_dtype(dtype)
    array = xp.array(backend.to_device(data, device), dtype=dtype, copy=True)
    return Tensor(array, requires_grad=requires_grad, name=name)


def _holds_numpy_float64(data: Any) -> bool:
    """Is ``data`` a numpy float64 scalar, or a list holding one? PyTorch keeps float64 then
    (``torch.tensor(np.mean(a))``, ``torch.tensor([1.0, np.float64(2)])``), as for an array;
    only Python floats alone become the default float32."""
    if isinstance(data, np.float64):
        return True
    return isinstance(data, (list, tuple)) and any(_holds_numpy_float64(v) for v in data)


class TensorType(type):
    """The type of PyTorch's legacy typed constructors (``torch.FloatTensor`` is a
    ``torch.tensortype``): calling one makes a tensor of its dtype; ``isinstance(x,
    dg.FloatTensor)`` asks whether x is a float32 tensor on the CPU; ``x.type(dg.LongTensor)``
    converts (NOTE [the legacy constructor], tensor.py)."""

    dtype: np.dtype

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:
        data = args[0] if args else None
        if isinstance(data, Tensor):
            if len(args) > 1:
                raise TypeError(f"{cls.__name__}(): sizes cannot follow a tensor")
            if data.dtype != cls.dtype:
                raise TypeError(
                    f"{cls.__name__}(): expected a tensor of dtype {cls.dtype}, got "
                    f"{data.dtype} (convert it with .to(dg.{cls.dtype.name}) or "
                    f".type(dg.{cls.__name__}))"
                )
            return Tensor(data, device=device)  # the same memory, as in PyTorch
        if backend.is_array(data) or isinstance(data, np.generic):
            if len(args) > 1:
                raise TypeError(f"{cls.__name__}(): sizes cannot follow an array")
            array = backend.to_numpy(data) if not isinstance(data, np.ndarray) else data
            return Tensor(np.array(array, dtype=cls.dtype), device=device)
        if not args:
            return Tensor(np.zeros((0,), dtype=cls.dtype), device=device)
        return Tensor(legacy_data(args[0], args[1:], cls.__name__, cls.dtype), device=device)

    def __instancecheck__(cls, instance: Any) -> bool:
        return (isinstance(instance, Tensor) and instance.dtype == cls.dtype
                and instance.device == backend.CPU)

    def __repr__(cls) -> str:
        return f"<class 'dg.{cls.__name__}'>"


def _tensor_type(name: str, dtype: Any, doc: str) -> TensorType:
    return TensorType(name, (), {"dtype": np.dtype(dtype), "__doc__": doc,
                                 "__module__": __name__})


_LEGACY_DOC = (
    "PyTorch's legacy constructor of {dtype} tensors: ``dg.{name}([1, 2])`` holds the values "
    "as {dtype}; ``dg.{name}(2, 3)`` has shape (2, 3), filled with zeros (PyTorch leaves it "
    "uninitialised); ``dg.{name}()`` is empty. ``isinstance(x, dg.{name})`` asks for a {dtype} "
    "tensor on the CPU. ``dg.tensor(data, dtype=dg.{dtype})`` is the modern spelling."
)
FloatTensor = _tensor_type("FloatTensor", np.float32,
                           _LEGACY_DOC.format(name="FloatTensor", dtype="float32"))
DoubleTensor = _tensor_type("DoubleTensor", np.float64,
                            _LEGACY_DOC.format(name="DoubleTensor", dtype="float64"))
HalfTensor = _tensor_type("HalfTensor", np.float16,
                          _LEGACY_DOC.format(name="HalfTensor", dtype="float16"))
LongTensor = _tensor_type("LongTensor", np.int64,
                          _LEGACY_DOC.format(name="LongTensor", dtype="int64"))
IntTensor = _tensor_type("IntTensor", np.int32, _LEGACY_DOC.format(name="IntTensor",
                                                                     dtype="int32"))
ShortTensor = _tensor_type("ShortTensor", np.int16,
                           _LEGACY_DOC.format(name="ShortTensor", dtype="int16"))
CharTensor = _tensor_type("CharTensor", np.int8, _LEGACY_DOC.format(name="CharTensor",
                                                                      dtype="int8"))
ByteTensor = _tensor_type("ByteTensor", np.uint8, _LEGACY_DOC.format(name="ByteTensor",
                                                                       dtype="uint8"))
BoolTensor = _tensor_type("BoolTensor", np.bool_, _LEGACY_DOC.format(name="BoolTensor",
                                                                       dtype="bool"))
LEGACY_TYPES = (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor,
                CharTensor, ByteTensor, BoolTensor)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing ``array``'s memory (no copy), as ``torch.from_numpy``: changes to one
    are seen in the other. numpy's writes are not counted by the version counter (NOTE
    [version counters]): change the values through the tensor's in-place ops instead.

    >>> a = np.array([1.0, 2.0]); t = dg.from_numpy(a); a[0] = 5.0   # t is now [5., 2.]
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"can't convert np.ndarray of type {array.dtype}: use bool, integer or float arrays"
        )
    return Tensor(array)


def _shape(fn: str, shape: tuple) -> tuple[int, ...]:
    """The shape of a new tensor, given as f(2, 3) or f((2, 3)): integers (a float is an
    error, as in PyTorch, not a size rounded down), none of them negative."""
    sizes = normalize_sizes(shape, fn)
    for size in sizes:
        if size < 0:
            raise RuntimeError(
                f"{fn}(): Trying to create tensor with negative dimension {size}: {list(sizes)}"
            )
    return sizes


def _make(array: np.ndarray, device: Any, requires_grad: bool, name: str | None) -> Tensor:
    device = backend.normalize_device(device)
    if device != backend.CPU:
        array = backend.to_device(array, device)
    return Tensor(array, requires_grad=requires_grad, name=name)


def zeros(*shape: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          name: str | None = None) -> Tensor:
    return full(_shape("zeros", shape), 0.0, dtype=dtype, device=device,
                requires_grad=requires_grad, name=name)


def ones(*shape: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         name: str | None = None) -> Tensor:
    return full(_shape("ones", shape), 1.0, dtype=dtype, device=device,
                requires_grad=requires_grad, name=name)


def full(shape: Any, fill_value: Any, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, name: str | None = None) -> Tensor:
    """A tensor of ``shape`` filled with ``fill_value`` (float32 for floats, int64 for ints)."""
    if _too_big_int(fill_value):
        raise OverflowError(f"full(): fill_value {_short(fill_value)} is too big to convert "
                            "(int64 holds -2**63 up to 2**63 - 1)")
    if dtype is None:
        dtype = DEFAULT_FLOAT if isinstance(fill_value, float) else np.asarray(fill_value).dtype
    dtype = resolve_dtype(dtype)
    try:
        array = np.full(_shape("full", (shape,)), fill_value, dtype=dtype)
    except OverflowError:  # as PyTorch: an int that does not fit the requested dtype
        raise RuntimeError(f"full(): value {_short(fill_value)} cannot be converted to type "
                           f"{np.dtype(dtype).name} without overflow") from None
    return _make(array, device, requires_grad, name)


def _too_big_int(value: Any) -> bool:
    """A Python int that no tensor dtype can hold (beyond int64), as torch refuses it."""
    return (isinstance(value, int) and not isinstance(value, bool)
            and not -(2**63) <= value < 2**63)


def _short(value: Any) -> str:
    """A number for an error message, at most 40 characters (an int may have thousands)."""
    text = str(value)
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} digits)"


class Generator:
    """A stream of random numbers of its own, as ``torch.Generator``: makemore's
    ``g = dg.Generator().manual_seed(2147483647)``, then ``generator=g`` to randn, rand,
    randint, normal and multinomial. (The numbers are numpy's, not the ones PyTorch draws.)"""

    def __init__(self, device: Any = "cpu") -> None:
        self.device = backend.normalize_device(device)
        self.rng = np.random.default_rng()
        self.integers = _integer_stream(None)

    def manual_seed(self, seed: int) -> Generator:
        self.rng = np.random.default_rng(seed)
        self.integers = _integer_stream(seed)
        return self


# the generator everything draws from unless given another, as torch.default_generator
default_generator = Generator()


def _rng_of(generator: Generator | None) -> np.random.Generator:
    return (generator or default_generator).rng


def _integers_of(generator: Generator | None) -> np.random.MT19937:
    return (generator or default_generator).integers


def random_seed(generator: Generator | None = None) -> int:
    """A fresh seed as PyTorch draws one (``torch.empty((), dtype=torch.int64).random_()``):
    random64() % 2**63 of PyTorch's integer stream."""
    first, second = (int(v) for v in _integers_of(generator).random_raw(2))
    return ((first << 32) | second) % (1 << 63)


def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """A random permutation of 0 .. n-1, int64: the very one PyTorch deals for the same seed
    (NOTE [PyTorch's integer stream]).

    >>> dg.randperm(5, generator=dg.Generator().manual_seed(0)).tolist()
    [4, 0, 1, 3, 2]
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"randperm(n): n must be a non-negative int, got {n!r}")
    order = np.arange(n, dtype=np.int64)
    draws = _integers_of(generator).random_raw(max(n - 1, 0))
    for i in range(n - 1):
        z = i + int(draws[i]) % (n - i)
        order[i], order[z] = order[z], order[i]
    return _make(order.astype(resolve_dtype(dtype or int64)), device, requires_grad, None)


def randn(*shape: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, name: str | None = None) -> Tensor:
    """Standard normal samples (float32 unless dtype says otherwise)."""
    dtype = resolve_dtype(dtype or DEFAULT_FLOAT)
    array = _rng_of(generator).standard_normal(_shape("randn", shape)).astype(dtype)
    return _make(array, device, requires_grad, name)


def rand(*shape: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, name: str | None = None) -> Tensor:
    """Uniform samples in [0, 1)."""
    dtype = resolve_dtype(dtype or DEFAULT_FLOAT)
    array = _rng_of(generator).random(_shape("rand", shape)).astype(dtype)
    return _make(array, device, requires_grad, name)


def randint(*args: Any, size: Any = None, generator: Generator | None = None, dtype: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """Random integers in [low, high): ``dg.randint(high, size)`` or
    ``dg.randint(low, high, size)``, int64 (a minibatch's indices:
    ``ix = dg.randint(0, X.shape[0], (32,))``)."""
    if size is None:
        *args, size = args
    low, high = (0, *args) if len(args) == 1 else args
    shape = _shape("randint", size if isinstance(size, (tuple, list)) else (size,))
    array = _rng_of(generator).integers(low, high, shape)
    return _make(array.astype(resolve_dtype(dtype or int64)), device, requires_grad, None)


def normal(mean: Any, std: Any, size: Any = None, *, generator: Generator | None = None,
           dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Samples of the normal distribution N(mean, std^2): ``dg.normal(0, 0.01, size=(2, 1))``;
    mean and std may be tensors (the samples take their broadcast shape)."""
    # a tensor mean or std gives the samples its dtype (PyTorch's), numbers the default float
    given = [t.dtype for t in (mean, std) if isinstance(t, Tensor)]
    dtype = dtype or (np.result_type(*given) if given else DEFAULT_FLOAT)
    mean = mean.detach().numpy() if isinstance(mean, Tensor) else mean
    std = std.detach().numpy() if isinstance(std, Tensor) else std
    shape = None if size is None else _shape("normal", (size,))
    array = np.asarray(_rng_of(generator).normal(mean, std, shape))
    return _make(array.astype(resolve_dtype(dtype)), device, requires_grad, None)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    """Indices drawn with probabilities proportional to the (non-negative) weights ``input``:
    one draw per sample, from each row of a matrix (makemore:
    ``ix = dg.multinomial(p, num_samples=1, replacement=True, generator=g).item()``)."""
    weights = backend.to_numpy(input.detach().array).astype(np.float64)
    rows = weights.reshape(-1, weights.shape[-1]) if weights.ndim else weights.reshape(1, 1)
    if not replacement and num_samples > rows.shape[1]:
        raise RuntimeError(
            f"cannot sample n_sample ({num_samples}) > prob_dist.size(-1) ({rows.shape[1]}) "
            "samples without replacement: pass replacement=True"
        )
    if (rows < 0).any() or not np.isfinite(rows).all() or (rows.sum(axis=1) <= 0).any():
        raise RuntimeError("multinomial: the weights must be finite, non-negative, and not all 0")
    rng = _rng_of(generator)
    picks = [rng.choice(len(row), num_samples, replace=replacement, p=row / row.sum())
             for row in rows]
    shape = (num_samples,) if weights.ndim <= 1 else weights.shape[:-1] + (num_samples,)
    return _make(np.asarray(picks, dtype=np.int64).reshape(shape), input.device, False, None)


def arange(start: float, end: float | None = None, step: float = 1, dtype: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """start, start + step, ... below end (ints give int64, floats float32)."""
    if end is None:
        start, end = 0, start
    # a one-element tensor bound (torch.arange(x.size(0)), arange(n) with n = t.sum()) counts
    # as its number: an integer tensor gives integers, as in PyTorch
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if dtype is None:
        is_int = all(isinstance(v, int) for v in (start, end, step))
        dtype = int64 if is_int else DEFAULT_FLOAT
    return _make(np.arange(start, end, step).astype(resolve_dtype(dtype)), device,
                 requires_grad, None)


def linspace(start: float, end: float, steps: int, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    steps = normalize_size(steps, "linspace",
                           f"argument 'steps' must be int, not {type(steps).__name__}")
    array = np.linspace(start, end, steps).astype(resolve_dtype(dtype or DEFAULT_FLOAT))
    return _make(array, device, requires_grad, None)


def eye(n: int, m: int | None = None, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    n = normalize_size(n, "eye", f"argument 'n' must be int, not {type(n).__name__}")
    if m is not None:
        m = normalize_size(m, "eye", f"argument 'm' must be int, not {type(m).__name__}")
    array = np.eye(n, m, dtype=resolve_dtype(dtype or DEFAULT_FLOAT))
    return _make(array, device, requires_grad, None)


def _like(fn: Any, other: Tensor, dtype: Any, requires_grad: bool, **kw: Any) -> Tensor:
    return fn(other.shape, dtype=dtype or other.dtype, device=other.device,
              requires_grad=requires_grad, **kw)


def zeros_like(other: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _like(zeros, other, dtype, requires_grad)


def ones_like(other: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _like(ones, other, dtype, requires_grad)


def full_like(other: Tensor, fill_value: Any, dtype: Any = None,
              requires_grad: bool = False) -> Tensor:
    return full(other.shape, fill_value, dtype=dtype or other.dtype, device=other.device,
                requires_grad=requires_grad)


def randn_like(other: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _like(randn, other, dtype, requires_grad)


def rand_like(other: Tensor, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    return _like(rand, other, dtype, requires_grad)
