"""Optimizers (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, LBFGS)
and learning-rate schedules, in PyTorch's spelling.

Each optimizer's per-parameter update is one pure elementwise formula (``sgd_update``,
``adam_update``, ...) that the numpy reference evaluates now and the JIT fuses into a kernel;
see ``optimizer.py``. LBFGS, whose iterations depend on the values they read, runs its
host logic over the parameters' flat vector (``lbfgs.py``).

>>> import jitgrad as jg
>>> from jitgrad import optim
>>> p = jg.nn.Parameter(jg.tensor([3.0]))
>>> opt = optim.SGD([p], lr=0.25)
>>> for _ in range(2):
...     opt.zero_grad(); (p * p).sum().backward(); opt.step()
>>> p.item()  # 3 -> 1.5 -> 0.75
0.75
"""

from . import lr_scheduler
from .adadelta import Adadelta, adadelta_update
from .adagrad import Adagrad, adagrad_update
from .adam import Adam, AdamW, adam_update
from .adamax import Adamax, adamax_update
from .lbfgs import LBFGS
from .nadam import NAdam, nadam_update
from .optimizer import Optimizer, apply_update
from .radam import RAdam, radam_update
from .rmsprop import RMSprop, rmsprop_update
from .sgd import SGD, sgd_update

__all__ = [
    "Optimizer",
    "SGD",
    "Adam",
    "AdamW",
    "RMSprop",
    "Adagrad",
    "Adadelta",
    "Adamax",
    "NAdam",
    "RAdam",
    "LBFGS",
    "lr_scheduler",
    "apply_update",
    "sgd_update",
    "adam_update",
    "rmsprop_update",
    "adagrad_update",
    "adadelta_update",
    "adamax_update",
    "nadam_update",
    "radam_update",
]
