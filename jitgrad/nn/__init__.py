"""Neural-network building blocks, in PyTorch's spelling: ``Module`` and ``Parameter``,
layers, losses, ``init`` and the functional forms (``import jitgrad.nn.functional as F``).

>>> import jitgrad as jg
>>> from jitgrad import nn
>>> net = nn.Sequential(nn.Linear(64, 128, generator=0), nn.ReLU(), nn.Linear(128, 10))
>>> net(jg.zeros((2, 64))).shape
(2, 10)
"""

from . import functional, init, utils
from .activation import (
    ELU,
    GELU,
    GLU,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softsign,
    Tanh,
)
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose2d
from .layers import (
    CosineSimilarity,
    Dropout,
    Embedding,
    Flatten,
    Identity,
    Linear,
    PairwiseDistance,
    Unflatten,
)
from .losses import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import IncompatibleKeys, Module, Parameter
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm, RMSNorm
from .pooling import AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from .recurrent import GRU, LSTM, GRUCell, LSTMCell
from .registry import from_config
from .transformer import MultiheadAttention, TransformerEncoder, TransformerEncoderLayer

__all__ = [
    "functional",
    "init",
    "utils",
    "Module",
    "Parameter",
    "IncompatibleKeys",
    "from_config",
    "Linear",
    "Sequential",
    "ModuleList",
    "ReLU",
    "LeakyReLU",
    "GELU",
    "SiLU",
    "Tanh",
    "Sigmoid",
    "Softmax",
    "LogSoftmax",
    "Softmin",
    "LogSigmoid",
    "Softsign",
    "Hardtanh",
    "GLU",
    "PReLU",
    "CosineSimilarity",
    "PairwiseDistance",
    "Dropout",
    "LayerNorm",
    "BatchNorm1d",
    "Embedding",
    "Flatten",
    "Unflatten",
    "Identity",
    "MSELoss",
    "CrossEntropyLoss",
    "BCEWithLogitsLoss",
    "Conv1d",
    "Conv2d",
    "ConvTranspose2d",
    "MaxPool1d",
    "MaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AdaptiveAvgPool2d",
    "MultiheadAttention",
    "TransformerEncoderLayer",
    "TransformerEncoder",
    "LSTM",
    "GRU",
    "LSTMCell",
    "GRUCell",
    "ModuleDict",
    "ParameterList",
    "ParameterDict",
    "ReLU6",
    "ELU",
    "Mish",
    "Hardswish",
    "Softplus",
    "BatchNorm2d",
    "GroupNorm",
    "RMSNorm",
    "NLLLoss",
    "L1Loss",
    "BCELoss",
    "SmoothL1Loss",
    "HuberLoss",
    "KLDivLoss",
    "CosineEmbeddingLoss",
]
