"""Neural-network building blocks (PyTorch's ``torch.nn``).

- ``module``: ``Module`` (the base class: parameters, buffers, train / eval, state_dict, save /
  load), ``Parameter``, and the containers ``Sequential``, ``ModuleList`` and ``ModuleDict``
- ``layers``: ``Linear``, ``Bilinear``, ``Embedding``, ``EmbeddingBag``, ``Dropout``, ``Identity``,
  ``Flatten`` and the activations as modules (``ReLU``, ``Tanh``, ``Sigmoid``, ``GELU``,
  ``LeakyReLU``, ``Softmax``, ``LogSoftmax``)
- ``recurrent``: ``RNNCell``, ``GRUCell``, ``LSTMCell`` (one step) and ``RNN``, ``GRU``,
  ``LSTM`` (whole sequences)
- ``conv``: ``Conv1d``, ``Conv2d``, ``Conv3d``, ``ConvTranspose1d``, ``ConvTranspose2d``,
  ``MaxPool2d``, ``MaxUnpool1d``, ``MaxUnpool2d``, ``Unfold``, ``Fold``; ``norm``:
  ``LayerNorm``, ``BatchNorm1d``, ``BatchNorm2d``, ``InstanceNorm1d``, ``InstanceNorm2d``
- ``loss``: ``MSELoss``, ``L1Loss``, ``SmoothL1Loss``, ``CrossEntropyLoss``, ``NLLLoss``,
  ``KLDivLoss``, ``BCELoss``, ``BCEWithLogitsLoss``, ``HuberLoss``, ``MarginRankingLoss``,
  ``HingeEmbeddingLoss``, ``TripletMarginLoss``, ``PoissonNLLLoss``, ``GaussianNLLLoss``,
  ``CosineEmbeddingLoss``
- ``functional`` (``dg.nn.functional``, usually imported as ``F``): the stateless functions
- ``utils``: ``clip_grad_norm_``, ``clip_grad_value_``; ``utils.rnn``: ``PackedSequence``,
  ``pack_padded_sequence``, ``pad_packed_sequence``, ``pack_sequence``, ``pad_sequence``
- ``more_layers``: ``SiLU``, ``Dropout2d``, ``AvgPool2d``, ``AdaptiveAvgPool2d`` and the lazy
  layers ``LazyLinear``, ``LazyConv2d``, ``LazyBatchNorm1d``, ``LazyBatchNorm2d``;
  ``GroupNorm``, ``PixelShuffle``, ``Upsample``, ``UpsamplingNearest2d``, ``AdaptiveMaxPool1d``,
  ``AdaptiveMaxPool2d``
- ``padding``: ``ZeroPad1d/2d``, ``ConstantPad1d/2d``, ``ReflectionPad1d/2d``,
  ``ReplicationPad1d/2d``
- ``transformer``: ``MultiheadAttention``, ``TransformerEncoderLayer``, ``TransformerEncoder``,
  ``TransformerDecoderLayer``, ``TransformerDecoder``, ``Transformer``
- ``init``: ``normal_``, ``uniform_``, ``zeros_``, ``ones_``, ``constant_``, ``xavier_uniform_``,
  ``xavier_normal_``: a parameter's first values, in place
"""

from . import functional, init, utils
from .conv import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    Fold,
    MaxPool2d,
    MaxUnpool1d,
    MaxUnpool2d,
    Unfold,
)
from .layers import (
    GELU,
    Bilinear,
    Dropout,
    Embedding,
    EmbeddingBag,
    Flatten,
    Identity,
    LeakyReLU,
    Linear,
    LogSoftmax,
    ReLU,
    Sigmoid,
    Softmax,
    Tanh,
)
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    NLLLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
    TripletMarginLoss,
)
from .module import (
    LoadResult,
    Module,
    ModuleDict,
    ModuleList,
    Parameter,
    ParameterList,
    Sequential,
)
from .more_layers import (
    CELU,
    ELU,
    GLU,
    SELU,
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    CosineSimilarity,
    Dropout2d,
    GroupNorm,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LazyBatchNorm1d,
    LazyBatchNorm2d,
    LazyConv2d,
    LazyLinear,
    LogSigmoid,
    MaxPool1d,
    Mish,
    PairwiseDistance,
    PixelShuffle,
    PReLU,
    ReLU6,
    SiLU,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
    Unflatten,
    Upsample,
    UpsamplingNearest2d,
)
from .norm import BatchNorm1d, BatchNorm2d, InstanceNorm1d, InstanceNorm2d, LayerNorm
from .padding import (
    ConstantPad1d,
    ConstantPad2d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReplicationPad1d,
    ReplicationPad2d,
    ZeroPad1d,
    ZeroPad2d,
)
from .recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell
from .transformer import (
    MultiheadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "Conv1d", "Conv2d",
    "Conv3d",
    "CrossEntropyLoss", "Dropout", "Embedding", "EmbeddingBag", "Flatten", "GELU", "GRU",
    "GRUCell", "Identity",
    "L1Loss", "LSTM", "LSTMCell", "LayerNorm", "LeakyReLU", "Linear", "LoadResult", "LogSoftmax",
    "MSELoss", "MaxPool2d", "Module", "ModuleDict", "ModuleList", "NLLLoss", "Parameter", "RNN",
    "RNNCell", "ReLU", "Sequential", "Sigmoid", "Softmax", "Tanh", "functional", "init",
    "utils",
    # issue 37, item 3: counted in the learners' material (docs/pytorch_inventory.md)
    "KLDivLoss", "SmoothL1Loss", "HuberLoss", "CELU", "ELU", "GLU", "SELU", "CosineSimilarity",
    "Hardsigmoid", "Hardswish", "Hardtanh", "LogSigmoid", "Mish", "PairwiseDistance", "PReLU",
    "ReLU6", "Softmin", "Softplus", "Softsign", "Unflatten", "AdaptiveAvgPool1d", "AvgPool1d",
    "MaxPool1d", "ParameterList",
    "AdaptiveAvgPool2d", "AvgPool2d", "Dropout2d", "LazyBatchNorm1d", "LazyBatchNorm2d",
    "LazyConv2d", "LazyLinear", "SiLU", "ConvTranspose2d", "GroupNorm", "PixelShuffle",
    "Upsample", "UpsamplingNearest2d", "MultiheadAttention", "Transformer", "TransformerDecoder",
    "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer",
    # issue 37: layers and functional ops
    "MaxUnpool1d", "MaxUnpool2d", "Unfold", "Fold", "ConvTranspose1d",
    "InstanceNorm1d", "InstanceNorm2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Bilinear",
    "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d",
    "ReplicationPad2d", "ZeroPad1d", "ZeroPad2d",
    # issue 37: losses
    "CosineEmbeddingLoss", "GaussianNLLLoss", "HingeEmbeddingLoss", "MarginRankingLoss",
    "PoissonNLLLoss", "TripletMarginLoss",
    "Hardshrink", "Softshrink", "Tanhshrink", "Threshold",  # issue 37: kinks as PyTorch's
]


# A PyTorch name dyngraph does not have yet (NOTE [missing names], dyngraph/missing.py).
from ..missing import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)
