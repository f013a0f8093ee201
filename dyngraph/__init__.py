"""dyngraph: watch define-by-run autograd happen.

A compact autograd engine (numpy on the CPU, CuPy on a GPU) with a PyTorch-shaped API, which
emits an event for every node it creates and every gradient it computes (``dg.events``).

>>> import dyngraph as dg
>>> x = dg.tensor([[1., 2.]], requires_grad=True, name="x")
>>> W = dg.randn(2, 3, requires_grad=True, name="W")
>>> loss = (x @ W).tanh().sum()
>>> loss.backward()
>>> x.grad.shape
(1, 2)
"""

# ruff: noqa: I001
import contextlib
import sys

# NOTE [import order] tensor.py first: it imports the ops, which import function.py, which
# needs Tensor. Everything else builds on those.
from .tensor import Tensor
from . import autograd, cuda, nn, player
from .spine import events
from .anomaly import detect_anomaly, is_anomaly_enabled
from .backend import device
from .spine.events import scope
from .factories import (
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    Generator,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    arange,
    bool_,
    default_generator,
    eye,
    float16,
    float32,
    float64,
    from_numpy,
    full,
    full_like,
    int32,
    int64,
    linspace,
    manual_seed,
    multinomial,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    tensor,
    zeros,
    zeros_like,
)
from .function import Function, FunctionHook
from .functions import (  # issue 13 names first, then the original ones
    allclose,
    mv,
    all,
    amax,
    amin,
    any,
    bmm,
    chunk,
    cumsum,
    det,
    einsum,
    inverse,
    flip,
    gather,
    log1p,
    masked_fill,
    mm,
    norm,
    outer,
    prod,
    scatter_add,
    sign,
    sort,
    split,
    square,
    std,
    t,
    topk,
    tril,
    triu,
    unbind,
    abs,
    argmax,
    argmin,
    cat,
    clamp,
    clamp_max,
    clamp_min,
    clone,
    cos,
    exp,
    log,
    log2,
    log10,
    log_softmax,
    logsumexp,
    matmul,
    maximum,
    max,
    mean,
    min,
    minimum,
    permute,
    relu,
    repeat_interleave,
    reshape,
    sigmoid,
    sin,
    softmax,
    sqrt,
    stack,
    sum,
    tanh,
    transpose,
    where,
)
from .functions import (  # issue 37, item 3: counted in the learners' material
    acos,
    add,
    as_tensor,
    asin,
    atan,
    atan2,
    ceil,
    cosh,
    cumprod,
    diag,
    div,
    empty,
    empty_like,
    expm1,
    flatten,
    floor,
    is_tensor,
    meshgrid,
    mul,
    neg,
    nonzero,
    numel,
    pi,
    pow,
    round,
    sinh,
    squeeze,
    sub,
    unique,
    unsqueeze,
)
from .factories import int8, int16, randperm, uint8
from .serialization import load, save
from .tensor import set_printoptions
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .drawing import draw
from .record import Recording, record
from .recording_io import load_recording
from .graph_diff import diff
from .spine.reporter import EventSource

# --- toolbox A: optim, data (nn is imported above) ---
from . import accelerator, amp, backends, data, distributions, optim, testing, utils
from .amp import autocast
from .grad_mode import inference_mode
from .functions import (
    argsort,
    bernoulli,
    cdist,
    clip,
    compile,
    use_deterministic_algorithms,
    count_nonzero,
    dist,
    equal,
    erf,
    get_default_dtype,
    hstack,
    isclose,
    reciprocal,
    roll,
    rsqrt,
    vstack,
    index_select,
    isfinite,
    isinf,
    isnan,
    logical_and,
    logical_not,
    logical_or,
    masked_select,
    var,
)
from .functions import (  # issue 37: more of PyTorch's math
    bincount,
    block_diag,
    bucketize,
    cartesian_prod,
    combinations,
    cummax,
    cummin,
    gcd,
    heaviside,
    histc,
    isin,
    kron,
    lcm,
    logcumsumexp,
    rot90,
    searchsorted,
    take_along_dim,
    tensordot,
    trapezoid,
    trapz,
    tril_indices,
    triu_indices,
    unique_consecutive,
    addcdiv,
    addcmul,
    addmm,
    baddbmm,
    copysign,
    fmod,
    frac,
    hypot,
    index_add,
    index_copy,
    index_fill,
    kthvalue,
    lerp,
    logaddexp,
    median,
    mode,
    msort,
    nan_to_num,
    nanmean,
    nansum,
    quantile,
    scatter_reduce,
    sinc,
    trunc,
    xlogy,
)

# --- toolbox B: trace, checkpoint, memory ---
from . import memory
from .checkpoint import checkpoint
from .trace import StaticGraph, TracerWarning, load_static, trace

# --- PyTorch's dtype names: dg.float is float32 and dg.int is int32, as in PyTorch. They
# shadow the builtins float/int/bool in this module only, whose code below uses none of them.
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
bool = bool_  # noqa: A001


def watch(view: object = None, display: object = None, **options: object) -> object:
    """Watch the graphs the block builds: ``with dg.watch(pace=0.3): ...``.

    In a notebook (a Jupyter kernel): a live graph widget (dyngraph.jupyter.watch, the jupyter
    extra). ``with dg.watch(): loss.backward()`` shows the graph behind ``loss`` built in an
    earlier cell; ``with dg.watch(view):`` continues an earlier view.
    In a script or a terminal: a text outline printed as the code runs (dyngraph.outline.watch),
    unless a ``view`` or ``display=`` asks for the widget itself.
    In both, ``html="graph.html"`` also writes the self-contained page and prints its path."""
    from .outline import in_notebook
    from .outline import watch as _watch_outline

    if view is None and display is None and not in_notebook():
        return _watch_outline(**options)  # (it ignores the widget's options)
    from .jupyter import watch as _watch_view

    # The outline's own options mean nothing to a widget: a cell written for both runs in both.
    for text_only in ("stream", "max_lines"):
        options.pop(text_only, None)
    return _watch_view(view, display, **options)


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext dyngraph`` adds the ``%%dyngraph`` cell magic."""
    from .jupyter import load_ipython_extension as _load

    _load(ipython)


def _load_player() -> object:
    """The Jupyter layer's player, for ``Recording.to_html`` and for pictures on a machine with
    no Graphviz: imported the first time one of them asks (NOTE [the player], player.py)."""
    from .jupyter import player as _player

    return _player


player.connect(_load_player)


# NOTE [PyTorch as a source] PyTorch reports through the spine as every other engine does: an
# EventSource whose adapter (dyngraph.torch.watching, a TorchFunctionMode) is entered by every
# dg.watch() / dg.record() block once the learner has imported torch. dyngraph never imports
# torch itself, and the spine (which sits below everything) never names dyngraph.torch: the
# front door, where the layers meet, connects the two, as it connects the player above.
def _watch_torch() -> object:
    """While someone watches: PyTorch's ops as events, if the learner has imported torch."""
    if "torch" not in sys.modules:
        return contextlib.nullcontext()
    from .torch import watching

    return watching()


EventSource("PyTorch", engine=(), while_watched=_watch_torch)


__version__ = "0.1.0"

__all__ = [
    "data", "optim",  # toolbox A
    "StaticGraph", "TracerWarning", "checkpoint", "load_static", "memory", "trace",  # toolbox B
    "Function", "FunctionHook", "GradcheckError", "Recording", "Tensor", "diff", "draw",
    "load_recording",
    "record", "watch", "abs", "arange", "autograd", "bool_", "cat",
    "clamp", "cos", "cuda", "detect_anomaly", "enable_grad", "events", "exp", "eye", "float32",
    "float64", "full", "full_like", "gradcheck", "int32", "int64", "is_grad_enabled", "linspace",
    "log", "log_softmax", "logsumexp", "manual_seed", "matmul", "maximum", "mean", "minimum",
    "nn", "no_grad", "ones", "ones_like", "permute", "rand", "rand_like", "randn", "randn_like",
    "relu", "reshape", "scope", "set_grad_enabled", "sigmoid", "sin", "softmax", "sqrt", "stack",
    "sum", "tanh", "tensor", "transpose", "where", "zeros", "zeros_like",
    # issue 13: more ops with PyTorch's names
    "all", "amax", "amin", "any", "bmm", "chunk", "cumsum", "einsum", "flip", "gather", "log1p",
    "masked_fill", "mm", "norm", "outer", "prod", "scatter_add", "sign", "sort", "split",
    "square", "std", "t", "topk", "tril", "triu", "unbind",
    # issue 13: PyTorch's spellings and dtype names
    "argmax", "argmin", "bool", "clone", "double", "float", "from_numpy", "int", "log10", "log2",
    "long", "max", "min",
    # issue 28: what PyTorch's beginner tutorials, d2l, makemore and nanoGPT also use
    "Generator", "allclose", "device", "float16", "half", "multinomial", "mv", "normal",
    "randint",
    # issue 37: the differential sweep (torch.manual_seed returns it)
    "default_generator",
    # issue 37: second derivatives checked as PyTorch's torch.autograd.gradgradcheck does
    "gradgradcheck",
    # issue 28: modes are per thread
    "is_anomaly_enabled",
    # issue 37, item 3: the last names of the inventory (docs/pytorch_inventory.md)
    "det", "inverse",
    # issue 32: any autograd engine as an event source
    "EventSource",
    # issue 37: PyTorch's legacy typed constructors
    "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor", "HalfTensor",
    "IntTensor", "LongTensor", "ShortTensor",
    # issue 37: names the learners' programs reach for
    "clamp_max", "clamp_min", "repeat_interleave",
    # issue 37, item 3: counted in the learners' material (docs/pytorch_inventory.md)
    "testing", "utils", "distributions", "randperm", "save", "load", "set_printoptions", "int8",
    "int16", "uint8",
    "acos", "add", "as_tensor", "asin", "ceil", "cumprod", "diag", "div", "empty", "empty_like",
    "flatten", "floor", "is_tensor", "meshgrid", "mul", "neg", "nonzero", "numel", "pi", "pow",
    "round", "squeeze", "sub", "unique", "unsqueeze",
    # issue 37, done-when 4: nanoGPT's train.py on the CPU (docs/pytorch_inventory.md)
    "amp", "autocast", "argsort", "clip", "index_select", "isfinite", "isinf", "isnan",
    "masked_select", "var", "dist", "logical_and", "logical_not", "logical_or", "count_nonzero",
    "equal", "get_default_dtype", "hstack", "isclose", "reciprocal", "roll", "rsqrt", "vstack",
    "inference_mode", "erf", "bernoulli",
    "cdist",  # issue 37: layers and functional ops
    # the switches and probes at the top of learners' scripts (docs/pytorch_inventory.md)
    "accelerator", "backends", "compile", "use_deterministic_algorithms",
    # issue 37: more of PyTorch's math, composed from differentiable ops
    "addcdiv", "addcmul", "addmm", "baddbmm", "copysign", "fmod", "frac", "hypot", "lerp",
    "logaddexp", "nan_to_num", "nanmean", "nansum", "sinc", "trunc", "xlogy",
    "kthvalue", "median", "mode", "msort", "quantile",
    "index_add", "index_copy", "index_fill", "scatter_reduce",
    "bincount", "block_diag", "bucketize", "cartesian_prod", "combinations", "cummax", "cummin",
    "gcd", "heaviside", "histc", "isin", "kron", "lcm", "logcumsumexp", "rot90", "searchsorted",
    "take_along_dim", "tensordot", "trapezoid", "trapz", "tril_indices", "triu_indices",
    "unique_consecutive",
    # issue 37: found at the kinks, beside the activations there
    "atan", "atan2", "cosh", "expm1", "sinh",
]



# A PyTorch name dyngraph does not have yet: an AttributeError that names it and the nearest
# names dyngraph has (NOTE [missing names], missing.py).
from .missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)
